#pragma once

#include <QByteArray>
#include <QString>

namespace elsai {

// Files on the HOST side (downloads, offload storage): paths the user or the application
// chose, not agent-controlled workspace paths (those go through WorkspaceFs).

/// Reads a regular host file; FIFOs, sockets and devices fail at once (O_NONBLOCK + fstat).
/// Throws the OSError subclasses of errors.h.
QByteArray readHostFile(const QString &path);

/// Atomic replace through writeAtomicAt() (atomicwrite.h) in the target folder (created when
/// missing); the temp file is removed on any failure. `mode` applies to the new file. With
/// `overwrite` false an existing entry is never replaced (FileExistsError), race-free.
void writeHostFileAtomic(const QString &path, const QByteArray &data, int mode = 0644,
                         bool overwrite = true);

} // namespace elsai
