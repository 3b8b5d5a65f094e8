// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "messagebar.h"

#include "tonecolors.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QTimer>
#include <QToolButton>

namespace elsai {

namespace {

struct Look
{
    QColor accent;
    QStyle::StandardPixmap icon;
    const char *name;
};

Look lookOf(MessageBar::Type type)
{
    switch (type) {
    case MessageBar::Type::Positive:
        return {toneAccent(Tone::Positive), QStyle::SP_DialogApplyButton, QT_TR_NOOP("Success")};
    case MessageBar::Type::Warning:
        return {toneAccent(Tone::Neutral), QStyle::SP_MessageBoxWarning, QT_TR_NOOP("Warning")};
    case MessageBar::Type::Error:
        return {toneAccent(Tone::Negative), QStyle::SP_MessageBoxCritical, QT_TR_NOOP("Error")};
    case MessageBar::Type::Information:
        break;
    }
    return {toneAccent(Tone::Active), QStyle::SP_MessageBoxInformation, QT_TR_NOOP("Information")};
}

} // namespace

MessageBar::MessageBar(QWidget *parent)
    : QFrame(parent), m_icon(new QLabel(this)), m_text(new QLabel(this)),
      m_close(new QToolButton(this))
{
    setObjectName(QStringLiteral("messageBar"));
    setFrameShape(QFrame::StyledPanel);
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::PlainText); // names in messages are shown as typed
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_text->setObjectName(QStringLiteral("messageBarText"));
    m_close->setAutoRaise(true);
    m_close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    m_close->setToolTip(tr("Close this message"));
    m_close->setAccessibleName(tr("Close message"));
    m_close->setObjectName(QStringLiteral("messageBarClose"));
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 4, 4, 4);
    layout->addWidget(m_icon, 0, Qt::AlignTop);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    connect(m_close, &QToolButton::clicked, this, &MessageBar::dismiss);
    hide();
}

void MessageBar::showMessage(const QString &text, Type type, int timeoutMs)
{
    m_type = type;
    const Look look = lookOf(type);
    const int size = style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, this);
    m_icon->setPixmap(style()->standardIcon(look.icon).pixmap(size, size));
    QColor background = look.accent;
    background.setAlpha(40);
    setStyleSheet(QStringLiteral("elsai--MessageBar { background: %1; border: 1px solid %2; "
                                 "border-radius: 4px; }")
                      .arg(background.name(QColor::HexArgb), look.accent.name()));
    m_text->setText(text);
    setAccessibleName(tr(look.name));
    setAccessibleDescription(text);
    m_text->setAccessibleName(tr(look.name));
    show();
    const quint64 serial = ++m_serial;
    if (timeoutMs > 0) {
        QTimer::singleShot(timeoutMs, this, [this, serial] {
            if (serial == m_serial)
                dismiss();
        });
    }
}

void MessageBar::dismiss()
{
    ++m_serial;
    const bool wasShown = !isHidden();
    m_text->clear();
    hide();
    if (wasShown)
        Q_EMIT dismissed();
}

QString MessageBar::text() const
{
    return isHidden() ? QString() : m_text->text();
}

} // namespace elsai
