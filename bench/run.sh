#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Runs every benchmark and prints ratios against baselines measured in the same run.
#   bench/run.sh [--build-dir DIR] [--quick]
# --quick: fewer rounds (a smoke run, e.g. in CI); the figures are then rougher.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR="$ROOT/build"
RUNS=5
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --quick) RUNS=2; shift ;;
    -h | --help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
command -v rsync >/dev/null || { echo "bench: rsync is needed (apt-get install rsync)" >&2; exit 2; }

echo "== seeding: 20,000 files in 2,000 folders (half excluded) =="
bash "$ROOT/bench/seed_bench.sh" --build-dir "$BUILD_DIR" --runs "$RUNS"
echo
echo "== execute(\"true\") vs posix_spawn + waitpid of /bin/sh -c true =="
"$BUILD_DIR/bench/exec_bench"
echo
echo "== execute(\"true\") as an agent sees it: headless script calls and MCP stdio tools/call vs the same floor =="
"$BUILD_DIR/bench/stack_bench" "$BUILD_DIR/bin/elsai-workbench" 200 "$RUNS"
echo
echo "== execute(\"true\") through the bwrap backend vs a bare bwrap with the same arguments =="
if [[ ! -x $BUILD_DIR/bench/bwrap_bench ]]; then
    echo "bench: bwrap_bench not built; cmake --build $BUILD_DIR --target bwrap_bench" >&2
    exit 2
fi
"$BUILD_DIR/bench/bwrap_bench" $((RUNS * 40)) || echo "bench: bwrap_bench failed (bubblewrap missing or no user namespaces?)"
BWRAP_BENCH_NO_CGROUP=1 "$BUILD_DIR/bench/bwrap_bench" $((RUNS * 40)) | sed 's/^execute/without the pids cgroup: execute/' | tail -n 1 || true
for b in window_bench audit_bench; do
    [[ -x $BUILD_DIR/bench/$b ]] && continue
    echo "bench: $b not built; cmake --build $BUILD_DIR --target window_bench audit_bench" >&2
    exit 2
done
echo
echo "== window: event-loop stalls under a 50 MB console flood and a 20,000-file seed vs idle =="
QT_QPA_PLATFORM=offscreen "$BUILD_DIR/bench/window_bench"
echo
echo "== terminal: cat of 50 MB vs xterm on the same Xvfb; event-loop stalls; keypress to echo =="
if [[ -x $BUILD_DIR/bench/terminal_bench ]] && command -v xvfb-run >/dev/null; then
    xvfb-run -a -s "-screen 0 1280x800x24" "$BUILD_DIR/bench/terminal_bench" 50
else
    echo "bench: terminal_bench not built or xvfb-run missing (apt-get install xvfb xterm)" >&2
fi
echo
echo "== audit log: 1,000,000 appends, AuditLogModel vs QStandardItemModel (fresh process each) =="
"$BUILD_DIR/bench/audit_bench"
echo
echo "== audit: command fields (hash + classifier) of 1 MB adversarial commands vs one count() pass =="
"$BUILD_DIR/bench/audit_bench" --classify
if [[ -x $BUILD_DIR/bench/json_bench ]]; then
    echo
    echo "== agent JSON: MCP parse + argument check of adversarial 1 MiB and 2 MiB requests =="
    "$BUILD_DIR/bench/json_bench" --rounds "$RUNS"
fi
if command -v node >/dev/null; then
    echo
    echo "== MCP over stdio: read_file 4 KiB and list_dir 1,000 entries vs server-filesystem =="
    bash "$ROOT/bench/mcp_bench.sh" --build-dir "$BUILD_DIR" --calls $((RUNS * 80))
fi
echo
echo "== checkpoints and change tracking on 20,000 files vs cp -a, rsync -a --delete, diff -r =="
if [[ -x $BUILD_DIR/bench/checkpoint_bench ]]; then
    "$BUILD_DIR/bench/checkpoint_bench" --rounds "$RUNS" || echo "bench: checkpoint_bench failed"
else
    echo "bench: checkpoint_bench not built; cmake --build $BUILD_DIR --target checkpoint_bench" >&2
fi
echo
echo "== grep and glob on the 20,000-file seed tree vs rg and fdfind (same folders skipped) =="
if [[ -x $BUILD_DIR/bench/search_bench ]]; then
    "$BUILD_DIR/bench/search_bench" --rounds "$RUNS" || echo "bench: search_bench failed"
else
    echo "bench: search_bench not built; cmake --build $BUILD_DIR --target search_bench" >&2
fi
echo
echo "== execute(\"true\") over ssh vs a bare ssh on the same ControlMaster (throwaway sshd) =="
if [[ -x $BUILD_DIR/bench/ssh_bench ]]; then
    "$BUILD_DIR/bench/ssh_bench" $([[ $RUNS -lt 5 ]] && echo 60)
else
    echo "bench: ssh_bench not built; cmake --build $BUILD_DIR --target ssh_bench" >&2
    exit 2
fi
echo
echo "== checkpoints over ssh (2,000 files) vs rsync over the same ControlMaster (throwaway sshd) =="
if [[ -x $BUILD_DIR/bench/remote_checkpoint_bench ]]; then
    "$BUILD_DIR/bench/remote_checkpoint_bench" --rounds $((RUNS < 5 ? 1 : 3)) || echo "bench: remote_checkpoint_bench failed"
else
    echo "bench: remote_checkpoint_bench not built; cmake --build $BUILD_DIR --target remote_checkpoint_bench" >&2
fi
echo
echo "== the docker backend: execute(\"true\") vs the raw Engine API and the CLI; seeding vs docker cp =="
if [[ -z ${ELSAI_TEST_DOCKER_HOST:-} ]]; then
    echo "bench: docker_bench skipped: no engine (eval \"\$(bash .ci/docker --start)\" starts one)"
elif [[ -x $BUILD_DIR/bench/docker_bench ]]; then
    "$BUILD_DIR/bench/docker_bench" $([[ $RUNS -lt 5 ]] && echo 40 2)
else
    echo "bench: docker_bench not built; cmake --build $BUILD_DIR --target docker_bench" >&2
    exit 2
fi
