// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// Small helpers shared by the widget tests.

#include <QApplication>
#include <QDialog>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>

namespace elsai::test {

/// Answers the next application-modal dialog of type T (a QFileDialog or QMessageBox opened
/// with exec() by the code under test) as soon as it is shown: one shot. A dialog that never
/// comes leaves the timer running harmlessly; one of another type is rejected after 20 s so a
/// failing test ends instead of hanging. The returned flag turns true once the dialog was
/// answered.
template<typename T>
std::shared_ptr<bool> answerModal(std::function<void(T *)> answer)
{
    auto *timer = new QTimer(qApp);
    auto waited = std::make_shared<int>(0);
    auto answered = std::make_shared<bool>(false);
    QObject::connect(timer, &QTimer::timeout, timer, [timer, answer, waited, answered] {
        QWidget *modal = QApplication::activeModalWidget();
        if (auto *dialog = qobject_cast<T *>(modal)) {
            timer->stop();
            timer->deleteLater();
            *answered = true;
            answer(dialog);
        } else if ((*waited += 20) > 20000) {
            timer->stop();
            timer->deleteLater();
            if (auto *other = qobject_cast<QDialog *>(modal))
                other->reject();
        }
    });
    timer->start(20);
    return answered;
}

} // namespace elsai::test
