// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "confirm.h"

#include <QMessageBox>
#include <QPushButton>

namespace elsai {

namespace {

ConfirmHook &hookSlot()
{
    static ConfirmHook hook;
    return hook;
}

ConfirmAnswer askWithMessageBox(QWidget *parent, const Confirmation &q)
{
    QMessageBox box(q.offerSave ? QMessageBox::Question : QMessageBox::Warning, q.title,
                    confirmationText(q), QMessageBox::NoButton, parent);
    box.setObjectName(QStringLiteral("confirmDialog"));
    box.setAccessibleName(q.title);
    box.setWindowModality(Qt::WindowModal);
    QPushButton *cancel = box.addButton(QMessageBox::Cancel);
    QPushButton *save = q.offerSave ? box.addButton(QMessageBox::Save) : nullptr;
    QPushButton *accept =
        q.offerSave
            ? box.addButton(QMessageBox::Discard)
            : box.addButton(q.acceptText.isEmpty() ? QMessageBox::tr("Continue") : q.acceptText,
                            QMessageBox::DestructiveRole);
    accept->setObjectName(QStringLiteral("confirmAccept"));
    cancel->setObjectName(QStringLiteral("confirmCancel"));
    if (save)
        save->setObjectName(QStringLiteral("confirmSave"));
    box.setDefaultButton(save ? save : cancel);
    box.setEscapeButton(cancel);
    box.exec();
    if (box.clickedButton() == accept)
        return ConfirmAnswer::Accept;
    if (save && box.clickedButton() == save)
        return ConfirmAnswer::Save;
    return ConfirmAnswer::Cancel;
}

} // namespace

QString confirmationText(const Confirmation &q)
{
    constexpr int shown = 12;
    QString text = q.text;
    if (!q.items.isEmpty()) {
        text += QStringLiteral("\n");
        for (int i = 0; i < qMin(shown, int(q.items.size())); ++i)
            text += QStringLiteral("\n  • ") + q.items.at(i);
        if (q.items.size() > shown)
            text += QMessageBox::tr("\n  … and %n more", nullptr, int(q.items.size()) - shown);
    }
    return text;
}

ConfirmAnswer confirm(QWidget *parent, const Confirmation &question)
{
    if (const ConfirmHook &hook = hookSlot())
        return hook(parent, question);
    return askWithMessageBox(parent, question);
}

ConfirmHook setConfirmHook(ConfirmHook hook)
{
    return std::exchange(hookSlot(), std::move(hook));
}

} // namespace elsai
