#pragma once

#include <QByteArray>
#include <QString>

namespace elsai {

// Files on the HOST side (downloads, offload storage): paths the user or the application
// chose, not agent-controlled workspace paths (those go through WorkspaceFs).

/// Reads a regular host file; FIFOs, sockets and devices fail at once (O_NONBLOCK + fstat).
/// Throws the OSError subclasses of errors.h.
QByteArray readHostFile(const QString &path);

/// Atomic replace: temp file (O_CREAT|O_EXCL|O_NOFOLLOW) in the target folder (created when
/// missing), write, fsync, rename, folder fsync; the temp file is removed on any failure.
/// `mode` applies to the new file.
void writeHostFileAtomic(const QString &path, const QByteArray &data, int mode = 0644);

} // namespace elsai
