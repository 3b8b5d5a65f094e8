#pragma once

#include <QFrame>

#include <functional>

class QLabel;
class QHBoxLayout;
class QToolButton;

namespace elsai {

/// An inline message on top of (or under) a panel, KDE's KMessageWidget pattern without KF6:
/// a coloured bar with an icon, a word-wrapped text, optional action buttons and a close
/// button. Errors and warnings stay until dismissed or replaced; information may fade out
/// (showMessage's timeout). Hidden while empty. Accessible: the bar's accessible name is its
/// kind ("Error", "Warning", …) and its description the text, each button is named.
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
    /// Adds a button to the message shown (removed with it); returns it.
    QToolButton *addActionButton(const QString &text, const std::function<void()> &onClick);
    void dismiss();

    QString text() const;
    Type type() const { return m_type; }
    bool isShown() const { return !isHidden(); }

Q_SIGNALS:
    void dismissed();

private:
    void clearActions();
    QLabel *m_icon;
    QLabel *m_text;
    QHBoxLayout *m_actions;
    QToolButton *m_close;
    Type m_type = Type::Information;
    quint64 m_serial = 0; ///< which message a pending timeout belongs to
};

} // namespace elsai
