#!/bin/sh
# Runs train_bench (ours) and pytorch_cifar10.py (PyTorch) side by side at batch 32 with the
# same thread count, alternating ROUNDS times so both see the same machine load, and prints the
# median and range of images/s of each, their ratio, the share of the machine's sgemm (measured
# by each train_bench run; also per window of steps against the sgemm right after it, where the
# binary prints it) and the load average before and after.
# Usage: tests/bench/train/run.sh [BUILD_DIR] [THREADS] [ROUNDS]   (BUILD_DIR holds tests/bench/train/train_bench)
# Environment: ANCHOR=<another train_bench>  also runs that binary (e.g. one built from an older
#              commit) in every round, for a before/after ratio in the same run;
#              BENCH_ARGS="--precision mixed_bfloat16"  passes those to ours only (not to ANCHOR);
#              PREFIX="chrt -f 10"  runs every command under that prefix (on a machine shared
#              with other work, a real-time class keeps other processes from taking time slices
#              out of the step; the figures then stand for a quiet machine).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
threads=${2:-2}
rounds=${3:-3}
prefix=${PREFIX:-}
anchor=${ANCHOR:-}
bench_args=${BENCH_ARGS:-}
bench="$build/tests/bench/train/train_bench"
[ -x "$bench" ] || { echo "run.sh: $bench not found; build the train_bench target first" >&2; exit 1; }
[ -z "$anchor" ] || [ -x "$anchor" ] || { echo "run.sh: ANCHOR=$anchor is not an executable" >&2; exit 1; }
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || { echo "run.sh: PyTorch missing (apt-get install python3-torch)" >&2; exit 1; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
ours="" theirs="" before="" share_ours="" share_before="" window_ours="" window_before=""
result() { printf '%s\n' "$1" | sed -n 's/^RESULT images_per_s=//p'; }
share() { printf '%s\n' "$1" | sed -n 's/.*= \([0-9]*\)% of sgemm.*/\1/p'; }
window() { printf '%s\n' "$1" | sed -n 's/.*share median \([0-9]*\)%.*/\1/p'; }
i=0
while [ "$i" -lt "$rounds" ]; do
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of words
  out=$($prefix "$bench" --threads "$threads" --steps 60 $bench_args)
  printf '%s\n' "$out"
  ours="$ours $(result "$out")" share_ours="$share_ours $(share "$out")" window_ours="$window_ours $(window "$out")"
  if [ -n "$anchor" ]; then
    out=$($prefix "$anchor" --threads "$threads" --steps 60)
    printf '%s\n' "$out"
    before="$before $(result "$out")" share_before="$share_before $(share "$out")"
    window_before="$window_before $(window "$out")"
  fi
  out=$(OMP_NUM_THREADS=$threads $prefix "$python" "$here/pytorch_cifar10.py" --threads "$threads" --steps 60)
  printf '%s\n' "$out"
  theirs="$theirs $(result "$out")"
  i=$((i + 1))
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
range() { printf '%s\n' $1 | sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {print lo "-" hi}'; }
mo=$(median "$ours") mt=$(median "$theirs")
echo "load average (1, 5, 15 min): before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
echo "batchai train_bench: $ours img/s (median $mo, range $(range "$ours")); share of sgemm %:$share_ours"
has() { [ -n "$(printf '%s' "$1" | tr -d ' ')" ]; }
! has "$window_ours" ||
  echo "  per window of steps, share of the sgemm right after it %:$window_ours (median $(median "$window_ours"))"
if [ -n "$anchor" ]; then
  mb=$(median "$before")
  echo "anchor ($anchor): $before img/s (median $mb, range $(range "$before")); share of sgemm %:$share_before"
  ! has "$window_before" || echo "  per window of steps %:$window_before (median $(median "$window_before"))"
  awk -v a="$mo" -v b="$mb" 'BEGIN { printf "ratio batchai/anchor = %.2fx\n", a / b }'
fi
echo "pytorch            : $theirs img/s (median $mt, range $(range "$theirs"))"
awk -v a="$mo" -v b="$mt" 'BEGIN { printf "ratio batchai/pytorch = %.2fx (target >= 1.5x)\n", a / b }'
