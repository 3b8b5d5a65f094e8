// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "welcomepage.h"

#include "icons.h"

#include <QCommandLinkButton>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

namespace elsai {

WelcomePage::WelcomePage(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("welcomePage"));
    setAccessibleName(tr("Welcome"));
    auto *title = new QLabel(tr("<h2>elsai workbench</h2>"), this);
    title->setAccessibleName(tr("Welcome"));
    m_intro = new QLabel(this);
    m_intro->setObjectName(QStringLiteral("welcomeIntro"));
    m_intro->setWordWrap(true);
    m_intro->setTextFormat(Qt::RichText);
    m_intro->setAccessibleName(tr("About this sandbox"));
    auto *tryLabel = new QLabel(tr("<b>Three things to try</b>"), this);
    auto *startLabel = new QLabel(tr("<b>Start</b>"), this);

    const struct
    {
        Step step;
        const char *name;
        const char *icon;
    } entries[] = {
        {Step::OpenFile, "welcomeOpenFile", "document-open"},
        {Step::RunCommand, "welcomeRunCommand", "system-run"},
        {Step::RunAgent, "welcomeRunAgent", "media-playback-start"},
        {Step::NewSandbox, "welcomeNewSandbox", "document-new"},
        {Step::OpenFolder, "welcomeOpenFolder", "folder-open"},
        {Step::Shortcuts, "welcomeShortcuts", "help-about"},
    };
    for (const auto &e : entries) {
        auto *b = new QCommandLinkButton(this);
        b->setObjectName(QLatin1String(e.name));
        b->setIcon(themeIcon(QLatin1String(e.icon)));
        const Step step = e.step;
        connect(b, &QCommandLinkButton::clicked, this,
                [this, step] { Q_EMIT stepRequested(step); });
        m_buttons.append(b);
    }

    // The keyboard's place must show: command link buttons draw no focus frame of their own.
    setStyleSheet(QStringLiteral("QCommandLinkButton:focus { border: 2px solid palette(highlight);"
                                 " border-radius: 4px; }"));

    // A column of readable width in the middle, scrolling when the centre is small.
    auto *column = new QWidget(this);
    column->setMaximumWidth(fontMetrics().averageCharWidth() * 90);
    auto *layout = new QVBoxLayout(column);
    layout->addWidget(title);
    layout->addWidget(m_intro);
    layout->addSpacing(8);
    layout->addWidget(tryLabel);
    for (int i = 0; i < 3; ++i)
        layout->addWidget(m_buttons.at(i));
    layout->addSpacing(8);
    layout->addWidget(startLabel);
    // Two columns of starting points: they fit a narrow centre (the buttons' descriptions
    // wrap), and no button ends beyond the visible width.
    auto *start = new QGridLayout;
    for (int i = 3; i < m_buttons.size(); ++i)
        start->addWidget(m_buttons.at(i), (i - 3) / 2, (i - 3) % 2);
    layout->addLayout(start);
    layout->addStretch(1);

    auto *scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("welcomeScroll"));
    scroll->setAccessibleName(tr("Welcome"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *centre = new QWidget(scroll);
    auto *centreLayout = new QHBoxLayout(centre);
    centreLayout->addStretch(1);
    centreLayout->addWidget(column, 4);
    centreLayout->addStretch(1);
    scroll->setWidget(centre);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    updateTexts();
}

QCommandLinkButton *WelcomePage::button(Step step) const
{
    return m_buttons.value(int(step));
}

void WelcomePage::setDemo(bool demo)
{
    if (demo == m_demo)
        return;
    m_demo = demo;
    updateTexts();
}

void WelcomePage::updateTexts()
{
    auto set = [this](Step step, const QString &text, const QString &description) {
        QCommandLinkButton *b = button(step);
        b->setText(text);
        b->setDescription(description);
        b->setAccessibleName(text);
        b->setAccessibleDescription(description);
    };
    if (m_demo) {
        m_intro->setText(
            tr("The <b>demo</b> sandbox is a copy of a small Python package whose one test "
               "fails: <code>percent()</code> inverts its ratio. Everything here happens in "
               "that copy; the <i>Workspace</i> tree shows its files, the <i>Console</i> runs "
               "commands in it as the agent <code>console</code>, and the <i>Audit</i> panel "
               "records every change."));
        set(Step::OpenFile, tr("1. Open src/calc/ops.py"),
            tr("The function with the bug, highlighted in a tab with line numbers."));
        set(Step::RunCommand, tr("2. Run the tests"),
            tr("python3 -m unittest in the console: one failure, exit code 1."));
        set(Step::RunAgent, tr("3. Let a scripted agent fix it"),
            tr("The plan demo:fix-failing-test reads the test, rewrites percent() and runs the "
               "tests again; the Audit panel shows each call."));
    } else {
        m_intro->setText(
            tr("A <b>sandbox</b> is a workspace folder that agents share through four tools "
               "(execute, read_file, write_file, list_dir). The <i>Sessions</i> panel lists "
               "the sandboxes, the <i>Workspace</i> tree shows the current one's files, and "
               "the <i>Audit</i> panel records every change."));
        set(Step::OpenFile, tr("1. Open a file"),
            tr("Choose a file in the Workspace tree and press Enter."));
        set(Step::RunCommand, tr("2. Run a command"),
            tr("Type a command in the Console; it runs in the workspace as the agent "
               "'console'."));
        set(Step::RunAgent, tr("3. Run a scripted agent"),
            tr("Sandbox → Run a Scripted Agent: a plan of tool calls, played step by step."));
    }
    set(Step::NewSandbox, tr("New Sandbox…"), tr("Seed a sandbox from a project folder."));
    set(Step::OpenFolder, tr("Open Workspace Folder…"),
        tr("Inspect an existing folder in place, without a copy."));
    set(Step::Shortcuts, tr("Keyboard Shortcuts"), tr("Every action and its keys."));
}

} // namespace elsai
