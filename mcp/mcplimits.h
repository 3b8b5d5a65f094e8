// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QtGlobal>

namespace elsai {

/// The largest MCP message either transport takes by default: a stdio line, an HTTP request
/// body. A bigger one is refused unread (413 on HTTP, an error response on stdio).
constexpr qint64 kDefaultMaxMcpMessageBytes = 64 * 1024 * 1024;

} // namespace elsai
