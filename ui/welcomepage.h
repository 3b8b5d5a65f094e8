// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

class QCommandLinkButton;
class QLabel;

namespace elsai {

/// The centre of the window while no file is open: what the sandbox holds and three things to
/// try, each a button (keyboard: Tab, Space), then the usual starting points (New Sandbox,
/// Open Workspace Folder, keyboard shortcuts). For the demo sandbox the three steps are the
/// README's: open the failing function, run the tests, let a scripted agent fix it; for any
/// other sandbox: open a file, run a command, attach an agent.
class WelcomePage : public QWidget
{
    Q_OBJECT

public:
    enum class Step { OpenFile, RunCommand, RunAgent, NewSandbox, OpenFolder, Shortcuts };

    explicit WelcomePage(QWidget *parent = nullptr);

    /// Demo wording (the bundled sample project) or the general one.
    void setDemo(bool demo);
    bool isDemo() const { return m_demo; }
    QCommandLinkButton *button(Step step) const;

Q_SIGNALS:
    void stepRequested(elsai::WelcomePage::Step step);

private:
    void updateTexts();

    bool m_demo = false;
    QLabel *m_intro;
    QList<QCommandLinkButton *> m_buttons; ///< indexed by Step
};

} // namespace elsai
