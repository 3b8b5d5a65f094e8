// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QTextDocument>
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace elsai {

class CodeEditor;

/// The Find / Replace bar under an editor (Kate's and Qt Creator's inline pattern, no
/// dialog): searching while typing, Enter / Shift+Enter (and F3 / Shift+F3 through the file
/// tabs' actions) for the next / previous match, wrapping around the end; match case and
/// whole words; the replace row with Replace and Replace All (one undo step). Escape closes
/// it and gives the focus back to the editor.
class FindBar : public QWidget
{
    Q_OBJECT

public:
    explicit FindBar(CodeEditor *editor, QWidget *parent = nullptr);

    /// Shows the find row (the replace row too with `replace`), takes the editor's selection
    /// (one line) as the text and focuses the field.
    void showBar(bool replace);
    void closeBar();
    bool findNext();
    bool findPrevious();
    /// Replaces the current match and selects the next one.
    bool replaceCurrent();
    int replaceAll();

    QLineEdit *findField() const { return m_find; }
    QLineEdit *replaceField() const { return m_replace; }
    QCheckBox *matchCaseBox() const { return m_case; }
    QCheckBox *wholeWordsBox() const { return m_words; }
    bool isReplaceShown() const;
    /// "3 matches", "not found", "12 replaced" …
    QString statusText() const;
    QTextDocument::FindFlags flags() const;

protected:
    void keyPressEvent(QKeyEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void searchAsYouType();
    void showResult(bool found);

    CodeEditor *m_editor;
    QLineEdit *m_find;
    QLineEdit *m_replace;
    QToolButton *m_previous;
    QToolButton *m_next;
    QCheckBox *m_case;
    QCheckBox *m_words;
    QLabel *m_status;
    QLabel *m_replaceLabel;
    QWidget *m_replaceRow;
    QToolButton *m_close;
};

/// Go to line: an inline bar with the line number (1 to the number of lines), Enter goes
/// there, Escape closes.
class GoToLineBar : public QWidget
{
    Q_OBJECT

public:
    explicit GoToLineBar(CodeEditor *editor, QWidget *parent = nullptr);
    void showBar();
    QSpinBox *lineField() const { return m_line; }
    void go();

protected:
    void keyPressEvent(QKeyEvent *event) override;

private:
    CodeEditor *m_editor;
    QSpinBox *m_line;
    QLabel *m_range;
};

} // namespace elsai
