#!/bin/bash
# The allreduce benchmark (tests/bench/comm/allreduce_bench: the trainer's communicators beside
# MPI_Allreduce) across 2 hosts of the multi-host rig (tests/slurm/multihost/rig.sh): one sbatch
# allocation of 2 hosts x 2 ranks, `mpirun -np 4 --map-by ppr:2:node`, 256 KB to 64 MB, no
# OMPI_MCA_* settings (Open MPI finds the hosts' bridge itself). Prints the benchmark's table.
#   multihost_allreduce.sh ALLREDUCE_BENCH [BASE] [extra benchmark options...]
# BASE (default: a folder beside the benchmark) holds the rig; it is started and stopped here, also
# on failure or interrupt. Needs root; exits 77 where namespaces are not permitted. Only one rig
# at a time: do not run it while the multihost tests run. BENCH_TIMEOUT_S (default 900) bounds the job.
set -eu
usage() { echo "usage: $0 ALLREDUCE_BENCH [BASE] [extra benchmark options...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BENCH=$1
shift
case "$BENCH" in /*) ;; *) BENCH=$PWD/$BENCH ;; esac
[ -x "$BENCH" ] || { echo "not an executable: $BENCH (build the target allreduce_bench)" >&2; exit 2; }
BASE=$(dirname "$BENCH")/multihost-rig-bench
if [ $# -ge 1 ] && [[ "$1" != --* ]]; then BASE=$1; shift; fi
TIMEOUT_S=${BENCH_TIMEOUT_S:-900}
[[ "$TIMEOUT_S" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "BENCH_TIMEOUT_S must be 1..99999 seconds" >&2; exit 2; }
RIG=$(cd "$(dirname "$0")/../../slurm/multihost" && pwd)/rig.sh

"$RIG" check "$BASE"   # exits 77 with the reason where the rig cannot run
# shellcheck disable=SC2317  # reached through the trap
cleanup() { "$RIG" stop "$BASE" > /dev/null || echo "the rig in $BASE did not stop cleanly" >&2; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$RIG" start "$BASE" 2 > /dev/null
# shellcheck disable=SC1091
. "$BASE/rig.env"
export SLURM_CONF
unset "${!OMPI_MCA_@}"   # sbatch passes the caller's environment on: no Open MPI settings travel
cd "$RIG_SHARED"
out=$RIG_SHARED/allreduce.out
args=(--min-kb 256 --max-kb 65536 "$@")
echo "== rig of 2 hosts ($RIG_HOSTS at $RIG_ADDRS): sbatch -N2 --ntasks-per-node=2, mpirun -np 4 --map-by ppr:2:node"
id=$(sbatch --parsable -N2 --ntasks-per-node=2 -o "$out" --wrap \
  "mpirun --allow-run-as-root -np 4 --map-by ppr:2:node --bind-to none $(printf '%q ' "$BENCH" "${args[@]}")")
deadline=$((SECONDS + TIMEOUT_S))
while [ -n "$(squeue -h -j "$id" 2>/dev/null)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || { scancel "$id"; cat "$out" 2>/dev/null; echo "the job ran past ${TIMEOUT_S} s" >&2; exit 1; }
  sleep 1
done
cat "$out"
state=$(scontrol show job "$id" | grep -o 'JobState=[A-Z_]*')
[ "$state" = JobState=COMPLETED ] || { echo "the benchmark's job ended $state" >&2; exit 1; }
