// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "pty.h"

#include "errors.h"

#include <QFile>

#include <algorithm>
#include <cerrno>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>

namespace elsai {

PtyPair openPty(int cols, int rows)
{
    PtyPair pair;
    pair.master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!pair.master.isValid())
        throwOsError(errno, QStringLiteral("Cannot open a pseudo-terminal"),
                     QStringLiteral("/dev/ptmx"));
    char name[128];
    if (::grantpt(pair.master.get()) != 0 || ::unlockpt(pair.master.get()) != 0 ||
        ::ptsname_r(pair.master.get(), name, sizeof name) != 0)
        throwOsError(errno, QStringLiteral("Cannot unlock the pseudo-terminal"),
                     QStringLiteral("/dev/ptmx"));
    pair.slave.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (pair.slave.isValid() && pair.slave.get() <= STDERR_FILENO) {
        // The engine may run with 0..2 closed: the child dup2()s the slave onto them.
        const int moved = ::fcntl(pair.slave.get(), F_DUPFD_CLOEXEC, 3);
        pair.slave.reset(moved);
    }
    if (!pair.slave.isValid())
        throwOsError(errno, QStringLiteral("Cannot open the pseudo-terminal"),
                     QString::fromLocal8Bit(name));
    // UTF-8 input processing (a backspace erases a whole character in canonical mode).
    termios tio{};
    if (::tcgetattr(pair.slave.get(), &tio) == 0) {
        tio.c_iflag |= IUTF8;
        ::tcsetattr(pair.slave.get(), TCSANOW, &tio);
    }
    ::fcntl(pair.master.get(), F_SETFL, ::fcntl(pair.master.get(), F_GETFL) | O_NONBLOCK);
    setPtySize(pair.master.get(), cols, rows);
    return pair;
}

bool setPtySize(int masterFd, int cols, int rows)
{
    winsize ws{};
    ws.ws_col = static_cast<unsigned short>(std::clamp(cols, 1, 0xffff));
    ws.ws_row = static_cast<unsigned short>(std::clamp(rows, 1, 0xffff));
    return ::ioctl(masterFd, TIOCSWINSZ, &ws) == 0;
}

std::pair<int, int> ptySize(int masterFd)
{
    winsize ws{};
    if (::ioctl(masterFd, TIOCGWINSZ, &ws) != 0)
        return {0, 0};
    return {ws.ws_col, ws.ws_row};
}

pid_t ptyForegroundGroup(int masterFd)
{
    return ::tcgetpgrp(masterFd);
}

QString processName(pid_t pid)
{
    QFile f(QStringLiteral("/proc/%1/comm").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromLocal8Bit(f.readAll()).trimmed();
}

QString processCommandLine(pid_t pid, qsizetype maxChars)
{
    QFile f(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QByteArray raw = f.read(std::max<qsizetype>(maxChars, 0) * 4); // UTF-8: 4 bytes a character
    raw.replace('\0', ' ');
    return QString::fromLocal8Bit(raw).trimmed().left(maxChars);
}

} // namespace elsai
