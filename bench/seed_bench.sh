#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Seeding benchmark: our seeding (planSeed + executeSeed, default excludes) against
# `rsync -a --exclude ...` (same result) and `cp -a` (copies everything) on one generated tree.
#
#   bench/seed_bench.sh [--build-dir DIR] [--runs N] [--work DIR] [--settle S] [--keep]
#                       [--strict]
#
# The tree: 20,000 files of 200 B - 4 KB in about 2,000 folders; half of the files sit in
# node_modules/, .git/ and __pycache__/ folders, which seeding and rsync skip. Content and
# sizes are deterministic. Page caches cannot be dropped here, so every tool gets one warm-up
# run first; the runs then alternate between the tools (in a rotating order), each after a
# `sync` (not timed) so no run pays for the previous one's writeback. Reported: the median
# time of each tool and the median of the per-round elsai/rsync ratios.
# Where: /dev/shm when it has room, else $TMPDIR (or --work DIR). tmpfs measures the tools' own
# cost. On disk, file creation time depends on the file system's state: ext4 without a journal
# re-scans, on every inode it allocates, the inodes freed in the last 60 s (360 s when their
# table block is dirty), so anyone's recent `rm -rf` slows every tool, unevenly. On disk the
# script first waits --settle seconds (default 65) after generating the tree.
# --strict exits with status 2 when elsai is slower than rsync.
set -euo pipefail

BUILD_DIR=${BUILD_DIR:-}
RUNS=5
WORK=
KEEP=0
STRICT=0
SETTLE=
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --settle) SETTLE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --strict) STRICT=1; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z $BUILD_DIR ]]; then
    for d in "$ROOT/build" "$ROOT"/build-*; do
        if [[ -x $d/seed_bench || -x $d/bench/seed_bench ]]; then BUILD_DIR=$d; break; fi
    done
fi
BIN=
for b in "$BUILD_DIR/bench/seed_bench" "$BUILD_DIR/seed_bench"; do
    [[ -x $b ]] && BIN=$b && break
done
if [[ -z $BIN ]]; then
    echo "seed_bench not built; build it with: cmake --build <build-dir> --target seed_bench" >&2
    exit 2
fi
command -v rsync >/dev/null || { echo "rsync missing (apt-get install -y rsync)" >&2; exit 2; }

if [[ -z $WORK ]]; then
    base=${TMPDIR:-/tmp}
    shm_free_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
    if [[ ${shm_free_kb:-0} -gt 3000000 ]]; then base=/dev/shm; fi
    WORK=$(mktemp -d "$base/seed-bench.XXXXXX")
fi
mkdir -p "$WORK"
FS=$(df -PT "$WORK" | awk 'NR == 2 { print $2 }')
if [[ -z $SETTLE ]]; then
    if [[ $FS == tmpfs ]]; then SETTLE=0; else SETTLE=65; fi
fi
cleanup() { [[ $KEEP == 1 ]] || rm -rf "$WORK"; }
trap cleanup EXIT
SRC=$WORK/src

# ---- the tree -------------------------------------------------------------------------------
# Builtins only (no fork per file): 20,000 files take about a second.
generate() {
    local blob='' i size
    while ((${#blob} < 4096)); do
        blob+='The quick brown fox jumps over the lazy dog 0123456789. '
    done
    write_files() { # folder, count, seed
        local dir=$1 n=$2 seed=$3 k
        mkdir -p "$dir"
        for ((k = 0; k < n; k++)); do
            size=$((200 + (seed * 7919 + k * 104729) % 3800))
            printf '%s' "${blob:0:size}" >"$dir/f$k.txt"
        done
    }
    for ((i = 0; i < 1000; i++)); do write_files "$SRC/src/d$i" 10 "$i"; done          # kept
    for ((i = 0; i < 400; i++)); do write_files "$SRC/node_modules/m$i" 10 "$i"; done  # excluded
    for ((i = 0; i < 300; i++)); do write_files "$SRC/.git/objects/o$i" 10 "$i"; done  # excluded
    for ((i = 0; i < 300; i++)); do write_files "$SRC/src/d$i/__pycache__" 10 "$i"; done
}
echo "generating the tree in $SRC ..."
generate
nfiles=$(find "$SRC" -type f | wc -l)
ndirs=$(find "$SRC" -type d | wc -l)
echo "tree: $nfiles files in $ndirs folders, $(du -sh "$SRC" | cut -f1)"
sync
if ((SETTLE > 0)); then
    echo "waiting ${SETTLE}s for recently freed inodes to age out (--settle 0 skips)"
    sleep "$SETTLE"
fi

# ---- timing ---------------------------------------------------------------------------------
now_ns() { date +%s%N; }
run_elsai() { "$BIN" "$SRC" "$1" >/dev/null; }
run_rsync() { rsync -a --exclude node_modules --exclude .git --exclude __pycache__ "$SRC/" "$1/"; }
run_cp() { cp -a "$SRC" "$1"; }

# Prints elapsed ms of one run into a fresh destination. Destinations are only removed at the
# end: on ext4, creating files right after deleting thousands makes the inode allocator scan
# the recently freed ones, which swamps every tool's own cost.
time_one() { # tool, run number
    local tool=$1 dest=$WORK/dest-$1-$2 t0 t1
    [[ $tool == cp ]] || mkdir -p "$dest"
    sync # start from clean page cache state: no writeback of the previous run is billed
    t0=$(now_ns)
    "run_$tool" "$dest"
    t1=$(now_ns)
    echo $(((t1 - t0) / 1000000))
}
median() {
    printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

tools=(elsai rsync cp)
for t in "${tools[@]}"; do time_one "$t" 0 >/dev/null; done # warm-up
declare -A times
ratios=()
for ((r = 1; r <= RUNS; r++)); do
    declare -A round=()
    # the order rotates: a disturbance that fades during a round must not always hit one tool
    for ((k = 0; k < ${#tools[@]}; k++)); do
        t=${tools[(r + k) % ${#tools[@]}]}
        round[$t]=$(time_one "$t" "$r")
        times[$t]+=" ${round[$t]}"
    done
    # a round's tools ran back to back under the same load: their ratio is steadier than the
    # ratio of medians on a busy machine
    ratios+=("$(awk -v e="${round[elsai]}" -v r="${round[rsync]}" \
                'BEGIN { printf "%.3f", (r > 0 ? e / r : 0) }')")
done

# the seeded workspace holds exactly what rsync copied
elsai_dest=$WORK/dest-elsai-$RUNS
rsync_dest=$WORK/dest-rsync-$RUNS
elsai_files=$(find "$elsai_dest" -type f | wc -l)
rsync_files=$(find "$rsync_dest" -type f | wc -l)
if [[ $elsai_files != "$rsync_files" ]] || ! diff -r "$elsai_dest" "$rsync_dest" >/dev/null; then
    echo "MISMATCH: elsai seeded $elsai_files files, rsync $rsync_files" >&2
    exit 1
fi

# shellcheck disable=SC2086
{
    e=$(median ${times[elsai]})
    r=$(median ${times[rsync]})
    c=$(median ${times[cp]})
}
for t in "${tools[@]}"; do echo "runs ($t, ms):${times[$t]}"; done
echo "per-round ratios elsai/rsync: ${ratios[*]}"
ratio=$(printf '%.2f' "$(median "${ratios[@]}")")
echo "seed: elsai $e ms, rsync $r ms, cp $c ms; ratio elsai/rsync $ratio (target <= 1.0)" \
     "[$elsai_files files seeded, on $FS]"
if [[ $STRICT == 1 ]] && awk -v x="$ratio" 'BEGIN { exit !(x > 1.0) }'; then
    exit 2
fi
