// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

namespace elsai {

/// The one place an errno becomes an error type of errors.h (ENOENT → FileNotFoundError,
/// EACCES, EPERM, EXDEV and ELOOP → PermissionError, ETIMEDOUT → TimeoutError, …), with the
/// whole message given: throwOsError() builds its message and calls it, and a remote backend
/// throws a refusal its sandbox named by errno through it, so every backend raises the same
/// type for the same case. (Defined in errors.cpp.)
[[noreturn]] void throwErrnoError(int errnoValue, const QString &message);

} // namespace elsai
