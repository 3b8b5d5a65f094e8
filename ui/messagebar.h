// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QFrame>

class QLabel;
class QToolButton;

namespace elsai {

/// An inline message on top of a panel, KDE's KMessageWidget pattern without KF6: a coloured
/// bar with an icon, a word-wrapped plain text and a close button. Errors and warnings stay
/// until dismissed or replaced; information may fade out (showMessage's timeout). Hidden while
/// empty. Accessible: the bar's accessible name is its kind ("Error", "Warning", …) and its
/// description the text; the close button is named.
class MessageBar : public QFrame
{
    Q_OBJECT

public:
    enum class Type { Information, Positive, Warning, Error };
    Q_ENUM(Type)

    explicit MessageBar(QWidget *parent = nullptr);

    /// Shows `text` (replacing the message shown, and its actions). `timeoutMs` > 0 hides it
    /// after that long unless another message replaced it meanwhile.
    void showMessage(const QString &text, Type type = Type::Error, int timeoutMs = 0);
    void dismiss();

    QString text() const;
    Type type() const { return m_type; }
    bool isShown() const { return !isHidden(); }

Q_SIGNALS:
    void dismissed();

private:
    QLabel *m_icon;
    QLabel *m_text;
    QToolButton *m_close;
    Type m_type = Type::Information;
    quint64 m_serial = 0; ///< which message a pending timeout belongs to
};

} // namespace elsai
