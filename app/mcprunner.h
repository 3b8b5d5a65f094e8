// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "sandbox.h"

#include <QHostAddress>
#include <QString>

#include <utility>

namespace elsai {

struct SessionOptions;
class HeadlessRecording;

/// Parses the --mcp-http value `[HOST:]PORT` (`[::1]:PORT` for IPv6); the host defaults to
/// 127.0.0.1. ValueError naming the option otherwise.
std::pair<QHostAddress, quint16> parseMcpHttpAddress(const QString &value);

/// Serves `sandbox` over MCP as the options ask (--mcp-http or --mcp-stdio) until SIGINT,
/// SIGTERM or SIGHUP (exit status 128 + the signal, shutdownsignals.h) or the end of standard
/// input (stdio). Starts the sandbox first and stops it without sync at the end. For HTTP, prints
/// one JSON line per agent on stdout:
/// {"agent","mode","url","token"}, or with --mcp-config the named clients' configurations
/// (clientconfig.h); --mcp-config with --mcp-stdio prints them and returns without serving.
/// Returns the exit status.
int runMcp(const SessionOptions &options, const SandboxPtr &sandbox, HeadlessRecording &recording);

} // namespace elsai
