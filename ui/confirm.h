// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>
#include <QStringList>

#include <functional>

class QWidget;

namespace elsai {

/// A question asked before an action that destroys or replaces user data: the window asks
/// first, names what will be lost, and the safe answer is the default (Cancel, or Save when
/// unsaved edits are at stake). One place for every such question, so each is worded the same
/// way and tests can answer it (setConfirmHook) without a message box.
struct Confirmation
{
    /// What is asked, a stable key: "overwrite", "remove-sandbox", "delete", "unsaved",
    /// "quit-busy".
    QString kind;
    QString title;
    QString text;       ///< what will happen and what is lost, in one or two sentences
    QStringList items;  ///< what is lost, one entry each (paths, files), shown as a list
    QString acceptText; ///< the destructive button: "Replace", "Remove", "Delete", "Quit"
    /// Save / Discard / Cancel (unsaved edits): Save is the default; Accept means Discard.
    bool offerSave = false;
};

enum class ConfirmAnswer {
    Cancel, ///< keep everything as it is
    Accept, ///< do it (Discard when offerSave)
    Save,   ///< save first, then go on
};

using ConfirmHook = std::function<ConfirmAnswer(QWidget *parent, const Confirmation &question)>;

/// Asks `question`: a window-modal QMessageBox (object name "confirmDialog", accessible name
/// the title) whose default and Escape answer is Cancel (Save when offered). GUI thread only.
ConfirmAnswer confirm(QWidget *parent, const Confirmation &question);

/// Answers every question through `hook` instead of a message box (tests); an empty hook
/// restores the message box. Returns the hook it replaces.
ConfirmHook setConfirmHook(ConfirmHook hook);

/// The text of `question` as the message box shows it (text, then the items, at most 12).
QString confirmationText(const Confirmation &question);

} // namespace elsai
