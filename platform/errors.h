// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

#include <exception>

namespace elsai {

/// Base of every error the engine raises. Each subclass reports the name of the matching
/// exception of the Python reference (`specName()`), which the headless output and the window
/// show, and a message that says what failed and what to do.
class SandboxError : public std::exception
{
public:
    explicit SandboxError(QString message);
    virtual QString specName() const { return QStringLiteral("Exception"); }
    const QString &message() const { return m_message; }
    const char *what() const noexcept override { return m_utf8.constData(); }
    /// "SpecName: message", for logs and dialogs.
    QString display() const { return specName() + QStringLiteral(": ") + m_message; }

private:
    QString m_message;
    QByteArray m_utf8;
};

#define ELSAI_DECLARE_ERROR(Name, Base)                                                            \
    class Name : public Base                                                                       \
    {                                                                                              \
    public:                                                                                        \
        using Base::Base;                                                                          \
        QString specName() const override { return QStringLiteral(#Name); }                        \
    };

// The spec's sandbox exceptions.
ELSAI_DECLARE_ERROR(SandboxStartError, SandboxError)
ELSAI_DECLARE_ERROR(SandboxAttachError, SandboxError)
ELSAI_DECLARE_ERROR(AgentSandboxDetachedError, SandboxError)
ELSAI_DECLARE_ERROR(SandboxMutationDeniedError, SandboxError)
ELSAI_DECLARE_ERROR(WorkspacePrepareError, SandboxError)

// Validation errors (bad arguments, invalid AgentConfig combinations).
ELSAI_DECLARE_ERROR(ValueError, SandboxError)
/// A tool or operation that does not exist or is blocked for this agent.
ELSAI_DECLARE_ERROR(ToolNotFoundError, ValueError)

// OSError and the subclasses the file operations raise, as Python names them.
class OSError : public SandboxError
{
public:
    OSError(QString message, int errnoValue = 0);
    QString specName() const override { return QStringLiteral("OSError"); }
    int errnoValue() const { return m_errno; }

private:
    int m_errno;
};
ELSAI_DECLARE_ERROR(FileNotFoundError, OSError)
ELSAI_DECLARE_ERROR(FileExistsError, OSError)
ELSAI_DECLARE_ERROR(IsADirectoryError, OSError)
ELSAI_DECLARE_ERROR(NotADirectoryError, OSError)
/// Raised for every path that would leave the workspace (`..`, absolute paths, symlinks that
/// point outside) and for other refusals of the confinement layer.
ELSAI_DECLARE_ERROR(PermissionError, OSError)
ELSAI_DECLARE_ERROR(TimeoutError, OSError)

#undef ELSAI_DECLARE_ERROR

/// An error as it crosses an edge (headless output, MCP, plans, the models and the window):
/// the spec's type name and the message. describeError() is the one conversion they all use.
struct ErrorDescription
{
    QString type;
    QString message;
    /// "Type: message", for logs and dialogs.
    QString display() const { return type + QStringLiteral(": ") + message; }
};

/// A SandboxError gives its specName() and message; std::bad_alloc is "MemoryError" (as
/// Python names it); any other exception is "RuntimeError" with its what().
ErrorDescription describeError(const std::exception &e);
/// The same for a captured exception (a future's; QUnhandledException is unwrapped).
ErrorDescription describeError(const std::exception_ptr &e);
/// Inside a catch block: the exception being handled.
ErrorDescription describeCurrentError();

/// Throws the OSError subclass that matches `errnoValue` (ENOENT → FileNotFoundError, …),
/// with "<what> '<path>': <strerror>" as the message.
[[noreturn]] void throwOsError(int errnoValue, const QString &what, const QString &path);

} // namespace elsai
