#!/usr/bin/env bash
# Start-up times of `group list`, `workspace show` and `--help`, an older `batchai` against this
# build's, with `sqlite3 :memory: 'select 1'` as the floor (issue 14 item 9: within 3x of it).
# Usage: tests/bench/startup/run.sh <old batchai> [build-dir] [runs]   (targets: batchai startup_bench)
set -euo pipefail
OLD=${1:?usage: run.sh <old batchai> [build-dir] [runs]}
BUILD=${2:-build}
RUNS=${3:-51}
NEW="$BUILD/src/cli/batchai"
BENCH="$BUILD/tests/bench/startup/startup_bench"
for f in "$OLD" "$NEW" "$BENCH"; do
  [[ -x "$f" ]] || { echo "missing $f: cmake --build $BUILD --target batchai startup_bench" >&2; exit 1; }
done
command -v sqlite3 > /dev/null || { echo "sqlite3 not found (apt-get install sqlite3)" >&2; exit 1; }
for exe in "$OLD" "$NEW"; do
  echo "$exe: $(ldd "$exe" | wc -l) shared libraries mapped"
done
"$BENCH" --old "$OLD" --new "$NEW" --runs "$RUNS"
