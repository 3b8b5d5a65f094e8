// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "findbar.h"

#include "codeeditor.h"
#include "icons.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>

namespace elsai {

namespace {

QToolButton *toolButton(QWidget *parent, const QString &icon, const QString &text,
                        const QString &objectName)
{
    auto *b = new QToolButton(parent);
    b->setIcon(themeIcon(icon));
    b->setToolTip(text);
    b->setAccessibleName(text);
    b->setObjectName(objectName);
    b->setAutoRaise(true);
    return b;
}

} // namespace

FindBar::FindBar(CodeEditor *editor, QWidget *parent) : QWidget(parent), m_editor(editor)
{
    setObjectName(QStringLiteral("findBar"));
    setAccessibleName(tr("Find and replace"));
    m_find = new QLineEdit(this);
    m_find->setObjectName(QStringLiteral("findField"));
    m_find->setAccessibleName(tr("Find"));
    m_find->setPlaceholderText(tr("Find (Enter: next, Shift+Enter: previous)"));
    m_find->setClearButtonEnabled(true);
    m_replace = new QLineEdit(this);
    m_replace->setObjectName(QStringLiteral("replaceField"));
    m_replace->setAccessibleName(tr("Replace with"));
    m_replace->setPlaceholderText(tr("Replace with"));
    m_previous = toolButton(this, QStringLiteral("go-up"), tr("Find previous (Shift+F3)"),
                            QStringLiteral("findPrevious"));
    m_next = toolButton(this, QStringLiteral("go-down"), tr("Find next (F3)"),
                        QStringLiteral("findNext"));
    m_case = new QCheckBox(tr("Match &case"), this);
    m_case->setObjectName(QStringLiteral("matchCase"));
    m_words = new QCheckBox(tr("Whole w&ords"), this);
    m_words->setObjectName(QStringLiteral("wholeWords"));
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("findStatus"));
    m_status->setAccessibleName(tr("Find result"));
    m_close = toolButton(this, QStringLiteral("window-close"), tr("Close (Esc)"),
                         QStringLiteral("closeFindBar"));
    auto *replaceOne = new QPushButton(tr("&Replace"), this);
    replaceOne->setObjectName(QStringLiteral("replaceButton"));
    auto *replaceAllButton = new QPushButton(tr("Replace &All"), this);
    replaceAllButton->setObjectName(QStringLiteral("replaceAllButton"));

    auto *findLabel = new QLabel(tr("Find:"), this);
    findLabel->setBuddy(m_find);
    m_replaceLabel = new QLabel(tr("Re&place:"), this);
    m_replaceLabel->setBuddy(m_replace);

    // Narrow enough for a centre between two docks: the field with its arrows and close on
    // the first row, the options and the result under it, the replace row last.
    auto *layout = new QGridLayout(this);
    layout->setContentsMargins(6, 3, 6, 3);
    layout->setVerticalSpacing(2);
    layout->addWidget(findLabel, 0, 0);
    layout->addWidget(m_find, 0, 1);
    auto *findButtons = new QHBoxLayout;
    findButtons->addWidget(m_previous);
    findButtons->addWidget(m_next);
    findButtons->addStretch(1);
    findButtons->addWidget(m_close);
    layout->addLayout(findButtons, 0, 2);
    auto *options = new QHBoxLayout;
    options->addWidget(m_case);
    options->addWidget(m_words);
    options->addWidget(m_status, 1);
    layout->addLayout(options, 1, 1, 1, 2);
    // The replace row: label, field and buttons, hidden together.
    m_replaceRow = new QWidget(this);
    auto *replaceButtons = new QHBoxLayout(m_replaceRow);
    replaceButtons->setContentsMargins(0, 0, 0, 0);
    replaceButtons->addWidget(replaceOne);
    replaceButtons->addWidget(replaceAllButton);
    replaceButtons->addStretch(1);
    layout->addWidget(m_replaceLabel, 2, 0);
    layout->addWidget(m_replace, 2, 1);
    layout->addWidget(m_replaceRow, 2, 2);
    layout->setColumnStretch(1, 3);
    layout->setColumnStretch(2, 1);
    m_find->setMinimumWidth(fontMetrics().averageCharWidth() * 16);
    m_replace->setMinimumWidth(fontMetrics().averageCharWidth() * 16);

    connect(m_find, &QLineEdit::textEdited, this, &FindBar::searchAsYouType);
    connect(m_find, &QLineEdit::returnPressed, this, &FindBar::findNext);
    connect(m_replace, &QLineEdit::returnPressed, this, &FindBar::replaceCurrent);
    connect(m_previous, &QToolButton::clicked, this, &FindBar::findPrevious);
    connect(m_next, &QToolButton::clicked, this, &FindBar::findNext);
    connect(replaceOne, &QPushButton::clicked, this, &FindBar::replaceCurrent);
    connect(replaceAllButton, &QPushButton::clicked, this, &FindBar::replaceAll);
    connect(m_close, &QToolButton::clicked, this, &FindBar::closeBar);
    connect(m_case, &QCheckBox::toggled, this, &FindBar::searchAsYouType);
    connect(m_words, &QCheckBox::toggled, this, &FindBar::searchAsYouType);
    m_find->installEventFilter(this); // Shift+Enter: previous
    hide();
}

QTextDocument::FindFlags FindBar::flags() const
{
    QTextDocument::FindFlags f;
    if (m_case->isChecked())
        f |= QTextDocument::FindCaseSensitively;
    if (m_words->isChecked())
        f |= QTextDocument::FindWholeWords;
    return f;
}

bool FindBar::isReplaceShown() const
{
    return isVisible() && m_replace->isVisible();
}

void FindBar::showBar(bool replace)
{
    const QString selected = m_editor->textCursor().selectedText();
    // A selection within one line is what to look for (U+2029 separates lines in it).
    if (!selected.isEmpty() && !selected.contains(QChar::ParagraphSeparator))
        m_find->setText(selected);
    m_replace->setVisible(replace);
    m_replaceRow->setVisible(replace);
    m_replaceLabel->setVisible(replace);
    show();
    m_find->setFocus(Qt::ShortcutFocusReason);
    m_find->selectAll();
    if (!m_find->text().isEmpty())
        showResult(m_editor->countMatches(m_find->text(), flags()) > 0);
}

void FindBar::closeBar()
{
    hide();
    m_editor->setFocus();
}

void FindBar::searchAsYouType()
{
    // From the start of the current match, so typing one more letter extends it in place.
    QTextCursor cursor = m_editor->textCursor();
    cursor.setPosition(cursor.selectionStart());
    m_editor->setTextCursor(cursor);
    if (m_find->text().isEmpty()) {
        m_status->clear();
        return;
    }
    showResult(m_editor->find(m_find->text(), flags()));
}

bool FindBar::findNext()
{
    const bool found = m_editor->find(m_find->text(), flags());
    showResult(found);
    return found;
}

bool FindBar::findPrevious()
{
    const bool found = m_editor->find(m_find->text(), flags() | QTextDocument::FindBackward);
    showResult(found);
    return found;
}

bool FindBar::replaceCurrent()
{
    const bool replaced = m_editor->replaceCurrent(m_find->text(), m_replace->text(), flags());
    showResult(m_editor->countMatches(m_find->text(), flags()) > 0);
    return replaced;
}

int FindBar::replaceAll()
{
    const int n = m_editor->replaceAll(m_find->text(), m_replace->text(), flags());
    m_status->setText(tr("%1 replaced").arg(n));
    return n;
}

void FindBar::showResult(bool found)
{
    if (m_find->text().isEmpty()) {
        m_status->clear();
        return;
    }
    if (!found) {
        m_status->setText(tr("not found"));
        return;
    }
    constexpr int limit = 10000;
    const int n = m_editor->countMatches(m_find->text(), flags(), limit);
    if (n >= limit)
        m_status->setText(tr("%1+ matches").arg(limit));
    else
        m_status->setText(n == 1 ? tr("1 match") : tr("%1 matches").arg(n));
}

QString FindBar::statusText() const
{
    return m_status->text();
}

void FindBar::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Escape) {
        closeBar();
        return;
    }
    QWidget::keyPressEvent(event);
}

bool FindBar::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_find && event->type() == QEvent::KeyPress) {
        auto *key = static_cast<QKeyEvent *>(event);
        if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) &&
            key->modifiers().testFlag(Qt::ShiftModifier)) {
            findPrevious();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

GoToLineBar::GoToLineBar(CodeEditor *editor, QWidget *parent) : QWidget(parent), m_editor(editor)
{
    setObjectName(QStringLiteral("goToLineBar"));
    setAccessibleName(tr("Go to line"));
    m_line = new QSpinBox(this);
    m_line->setObjectName(QStringLiteral("goToLineField"));
    m_line->setAccessibleName(tr("Line number"));
    m_line->setMinimum(1);
    auto *label = new QLabel(tr("&Go to line:"), this);
    label->setBuddy(m_line);
    m_range = new QLabel(this);
    auto *go = new QPushButton(tr("Go"), this);
    go->setObjectName(QStringLiteral("goToLineButton"));
    auto *close = toolButton(this, QStringLiteral("window-close"), tr("Close (Esc)"),
                             QStringLiteral("closeGoToLineBar"));
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 3, 6, 3);
    layout->addWidget(label);
    layout->addWidget(m_line);
    layout->addWidget(m_range);
    layout->addWidget(go);
    layout->addStretch(1);
    layout->addWidget(close);
    connect(go, &QPushButton::clicked, this, &GoToLineBar::go);
    connect(close, &QToolButton::clicked, this, [this] {
        hide();
        m_editor->setFocus();
    });
    hide();
}

void GoToLineBar::showBar()
{
    m_line->setMaximum(qMax(1, m_editor->blockCount()));
    m_line->setValue(m_editor->currentLine());
    m_range->setText(tr("of %1").arg(m_editor->blockCount()));
    show();
    m_line->setFocus(Qt::ShortcutFocusReason);
    m_line->selectAll();
}

void GoToLineBar::go()
{
    m_line->interpretText();
    m_editor->goToLine(m_line->value());
    hide();
    m_editor->setFocus();
}

void GoToLineBar::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Escape:
        hide();
        m_editor->setFocus();
        return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        go();
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

} // namespace elsai
