#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# MCP tool-call round trips over stdio: elsai-workbench --mcp-stdio vs the reference
# @modelcontextprotocol/server-filesystem under the same SDK client, one run, printed as ratios.
#   bench/mcp_bench.sh [--build-dir DIR] [--calls N]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR="$ROOT/build"
CALLS=400
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --calls) CALLS=$2; shift 2 ;;
    -h | --help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
command -v node >/dev/null || { echo "mcp_bench: node is needed" >&2; exit 2; }
if [[ ! -d $ROOT/tests/mcp-client/node_modules/@modelcontextprotocol/server-filesystem ]]; then
    (cd "$ROOT/tests/mcp-client" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec node "$ROOT/bench/mcp_bench.mjs" "$BUILD_DIR/bin/elsai-workbench" --calls "$CALLS"
