#!/usr/bin/env bash
# Runs the allreduce benchmark at 2 and 4 ranks on this host: the MPI ring and the shared-memory
# communicator vs MPI_Allreduce side by side, in interleaved rounds.
# Usage: tests/bench/comm/run.sh [path/to/allreduce_bench] [extra options, e.g. --chunk-kb 0,64,256
#        --shm-kb 256,1024 --min-kb 256 --max-kb 65536]
# Each ratio column is MPI_Allreduce time / that column's time (> 1: faster than MPI_Allreduce).
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
