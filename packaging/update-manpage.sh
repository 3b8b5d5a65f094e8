#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Regenerates packaging/elsai-workbench.1 from the program's --help and --version (help2man).
# tst_docs fails when an option of --help is missing from the man page: run this then.
#   packaging/update-manpage.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v help2man >/dev/null || { echo "update-manpage: apt-get install help2man" >&2; exit 2; }
# help2man reads the help in the C locale (its UTF-8 locale drops whole paragraphs), where each
# byte of "…" would become "?": the help goes through a wrapper that spells it "...".
wrap=$(mktemp -d)
trap 'rm -rf "$wrap"' EXIT
printf '#!/bin/sh\n"%s" "$@" | sed "s/\xe2\x80\xa6/.../g"\n' "$PWD/$build/bin/elsai-workbench" \
    >"$wrap/elsai-workbench"
chmod +x "$wrap/elsai-workbench"
PATH="$wrap:$PATH" help2man --no-info --section=1 \
    --name="workbench and headless engine for AI agent sandboxes" \
    --source="elsai" --manual="User Commands" --include=packaging/elsai-workbench.h2m \
    -o packaging/elsai-workbench.1 elsai-workbench
