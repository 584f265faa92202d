#!/bin/sh
# Trains the tutorial's job twice with `batchai train` (mpirun, RANKS ranks, one thread each) and twice
# with the independent PyTorch port (tutorial_port.py, RANKS gloo workers), one run at a time, on the
# same data and schedule, then compares the per-epoch validation accuracy (compare_runs.py; the
# curves of every run drawn into OUT/compare.svg).
#
# Usage: tests/bench/tutorial_port/run.sh --data-dir DIR --out DIR [--epochs N] [--steps-per-epoch N]
#          [--validation-images N] [--ranks 4] [--seeds "1 2"] [--resume]
#   Without --epochs / --steps-per-epoch both train the tutorial's full schedule: ceil(100 / RANKS)
#   epochs of 1563 steps per rank (hours on a small CPU machine).
#   DIR may hold the CIFAR-10 binary files plain or as .xz (decompressed once into OUT/data for
#   batchai, which reads plain files).
#   --resume keeps what OUT already holds and lets every run go on from its last epoch's checkpoint
#   (both trainers write one per epoch and resume exactly): the full schedule can be stopped
#   (kill, a machine's restart) and started again with the same command.
# Environment: BATCHAI (default build/src/cli/batchai), NICE (default 10), PYTHON (default /usr/bin/python3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
data="" out="" epochs="" steps="" validation="" ranks=4 seeds="1 2" resume=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) data=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --steps-per-epoch) steps=$2; shift 2 ;;
    --validation-images) validation=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --resume) resume="--resume"; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$data" ] || [ -z "$out" ]; then
  echo "run.sh: --data-dir and --out are required (try --help)" >&2; exit 2
fi
BATCHAI=${BATCHAI:-$root/build/src/cli/batchai}
PYTHON=${PYTHON:-/usr/bin/python3}
NICE=${NICE:-10}
[ -x "$BATCHAI" ] || { echo "run.sh: $BATCHAI not found: build batchai first or set BATCHAI" >&2; exit 1; }
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "run.sh: PyTorch missing (apt-get install python3-torch)" >&2; exit 1; }
mkdir -p "$out"

# batchai reads plain .bin files: decompress an .xz copy once.
files="data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin"
plain=$data
for f in $files; do
  if [ ! -f "$data/$f" ]; then
    [ -f "$data/$f.xz" ] || { echo "run.sh: $data has neither $f nor $f.xz" >&2; exit 1; }
    plain=$out/data
    mkdir -p "$plain"
    [ -f "$plain/$f" ] || xz -dc "$data/$f.xz" > "$plain/$f"
  fi
done

schedule=""
[ -n "$epochs" ] && schedule="$schedule --epochs $epochs"
[ -n "$steps" ] && schedule="$schedule --steps-per-epoch $steps"
[ -n "$validation" ] && schedule="$schedule --validation-images $validation"
# Open MPI refuses root unless told (containers, CI).
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

for seed in $seeds; do
  echo "== batchai, seed $seed: $(date -u +%H:%M:%S)"
  [ -n "$resume" ] || rm -rf "$out/batchai-seed$seed" "$out/port-seed$seed"
  mkdir -p "$out/batchai-seed$seed"
  # shellcheck disable=SC2086
  nice -n "$NICE" mpirun -np "$ranks" --oversubscribe --bind-to none \
    "$BATCHAI" train --data-dir "$plain" --dir "$out/batchai-seed$seed" --threads 1 --seed "$seed" $schedule $resume \
    >> "$out/batchai-seed$seed.log" 2>&1
  tail -n 3 "$out/batchai-seed$seed.log"
  echo "== port, seed $seed: $(date -u +%H:%M:%S)"
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=1 nice -n "$NICE" "$PYTHON" "$here/tutorial_port.py" --data-dir "$plain" \
    --out-dir "$out/port-seed$seed" --ranks "$ranks" --seed "$seed" $schedule $resume \
    >> "$out/port-seed$seed.log" 2>&1
  tail -n 2 "$out/port-seed$seed.log"
done
echo "== done: $(date -u +%H:%M:%S)"
ours="" theirs="" n=0
for seed in $seeds; do
  ours="$ours $out/batchai-seed$seed/metrics.csv" theirs="$theirs $out/port-seed$seed/metrics.csv" n=$((n + 1))
done
if [ "$n" -lt 2 ]; then
  echo "run.sh: one seed: no spread to compare against (compare_runs.py needs two or more a side)"
  exit 0
fi
# shellcheck disable=SC2086
"$PYTHON" "$here/compare_runs.py" --batchai $ours --port $theirs --svg "$out/compare.svg"
