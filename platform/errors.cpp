// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "errnoerror.h"

#include <QUnhandledException>

#include <cerrno>
#include <cstring>
#include <new>

namespace elsai {

SandboxError::SandboxError(QString message)
    : m_message(std::move(message)), m_utf8(m_message.toUtf8())
{
}

OSError::OSError(QString message, int errnoValue)
    : SandboxError(std::move(message)), m_errno(errnoValue)
{
}

ErrorDescription describeError(const std::exception &e)
{
    if (const auto *s = dynamic_cast<const SandboxError *>(&e))
        return {s->specName(), s->message()};
    if (dynamic_cast<const std::bad_alloc *>(&e))
        return {QStringLiteral("MemoryError"), QStringLiteral("out of memory")};
    return {QStringLiteral("RuntimeError"), QString::fromUtf8(e.what())};
}

ErrorDescription describeError(const std::exception_ptr &error)
{
    if (!error)
        return {QStringLiteral("RuntimeError"), QStringLiteral("unknown error")};
    try {
        std::rethrow_exception(error);
    } catch (...) {
        return describeCurrentError();
    }
}

ErrorDescription describeCurrentError()
{
    try {
        throw;
    } catch (const QUnhandledException &u) {
        if (u.exception())
            return describeError(u.exception());
        return {QStringLiteral("RuntimeError"), QStringLiteral("unknown error")};
    } catch (const std::exception &e) {
        return describeError(e);
    } catch (...) {
        return {QStringLiteral("RuntimeError"), QStringLiteral("unknown error")};
    }
}

void throwOsError(int e, const QString &what, const QString &path)
{
    throwErrnoError(
        e, QStringLiteral("%1 '%2': %3").arg(what, path, QString::fromLocal8Bit(std::strerror(e))));
}

void throwErrnoError(int e, const QString &msg)
{
    switch (e) {
    case ENOENT:
        throw FileNotFoundError(msg, e);
    case EEXIST:
        throw FileExistsError(msg, e);
    case EISDIR:
        throw IsADirectoryError(msg, e);
    case ENOTDIR:
        throw NotADirectoryError(msg, e);
    case EACCES:
    case EPERM:
    case EXDEV:
    case ELOOP:
        throw PermissionError(msg, e);
    case ETIMEDOUT:
        throw TimeoutError(msg, e);
    default:
        throw OSError(msg, e);
    }
}

} // namespace elsai
