// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "tools.h"

#include <QList>

namespace elsai {

/// The prebuilt host execution tools (HOST_EXECUTION_TOOL_NAMES): they act on the host, not in
/// a sandbox, so sandbox mode blocks them. Real implementations:
/// - shell(command, cwd?, timeout?): /bin/sh -c on the host (process group killed on timeout);
/// - python_repl(code, timeout?): python3 -c on the host;
/// - file_read(path): a host file as text;
/// - file_write(path, content): atomic write of a host file;
/// - environment(name?): one host environment variable, or the sorted names of all.
QList<Tool> hostExecutionTools();

} // namespace elsai
