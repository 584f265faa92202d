#!/usr/bin/env bash
# Median wall times of the real `batchai` executable (issue 2 item 9):
#   workspace show, and experiment list -o json with 10,000 experiments in the store.
# Usage: tests/bench/cli/run.sh [build-dir] [experiments]   (targets: batchai batchai_cli_seed)
set -euo pipefail
BUILD=${1:-build}
N=${2:-10000}
EXE="$BUILD/src/cli/batchai"
SEED="$BUILD/tests/bench/cli/batchai_cli_seed"
for f in "$EXE" "$SEED"; do
  [[ -x "$f" ]] || { echo "missing $f: cmake --build $BUILD --target batchai batchai_cli_seed" >&2; exit 1; }
done
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
export BATCHAI_HOME="$HOME_DIR" BATCHAI_SIM_DELAY_S=0

"$SEED" "$N" benchGroup benchWks

# median_ms <runs> <command...>: wall time of each run in ms, prints the median.
median_ms() {
  local runs=$1; shift
  local times=()
  for ((i = 0; i < runs; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m / 1000}'
}

"$EXE" workspace show -g benchGroup -n benchWks > /dev/null  # warm the page cache
rows=$("$EXE" experiment list -g benchGroup -w benchWks --query 'length(@)' -o tsv)
show=$(median_ms 31 "$EXE" workspace show -g benchGroup -n benchWks)
list=$(median_ms 11 "$EXE" experiment list -g benchGroup -w benchWks -o json)
table=$(median_ms 5 "$EXE" experiment list -g benchGroup -w benchWks -o table)
echo "experiments in store:                  $rows"
echo "workspace show             median ms:  $show   (target < 15)"
echo "experiment list -o json    median ms:  $list   (target < 150)"
echo "experiment list -o table   median ms:  $table"
