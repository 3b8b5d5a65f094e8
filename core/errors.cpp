#include "errors.h"

#include <cerrno>
#include <cstring>

namespace elsai {

SandboxError::SandboxError(QString message)
    : m_message(std::move(message)), m_utf8(m_message.toUtf8())
{
}

OSError::OSError(QString message, int errnoValue)
    : SandboxError(std::move(message)), m_errno(errnoValue)
{
}

void throwOsError(int e, const QString &what, const QString &path)
{
    const QString msg =
        QStringLiteral("%1 '%2': %3").arg(what, path, QString::fromLocal8Bit(std::strerror(e)));
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
