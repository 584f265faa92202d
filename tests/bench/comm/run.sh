#!/usr/bin/env bash
# Runs the allreduce benchmark at 2 and 4 ranks: ring vs MPI_Allreduce side by side.
# Usage: tests/bench/comm/run.sh [path/to/allreduce_bench] [extra options, e.g. --chunk-kb 0,64,256]
# The ratio column is MPI_Allreduce time / ring time (> 1: the ring is faster).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${1:-}
if [ -z "$bench" ]; then
  bench=$(ls -t "$here"/../../../build*/tests/bench/comm/allreduce_bench 2>/dev/null | head -n1 || true)
fi
[ -x "$bench" ] || { echo "allreduce_bench not found: build it (cmake --build <build> --target allreduce_bench) and pass its path" >&2; exit 1; }
shift || true
for ranks in 2 4; do
  # Oversubscribing makes Open MPI yield while polling: needed past the core count, slower below.
  extra=()
  [ "$(nproc)" -ge "$ranks" ] || extra=(--oversubscribe)
  echo "== mpiexec -n $ranks ${extra[*]}"
  mpiexec -n "$ranks" "${extra[@]}" --allow-run-as-root --bind-to none "$bench" "$@"
done
