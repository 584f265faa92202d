#!/bin/sh
# Runs train_bench (ours) and pytorch_cifar10.py (PyTorch) side by side at batch 32 with the
# same thread count, alternating ROUNDS times so both see the same machine load, and prints the
# median images/s of each and their ratio.
# Usage: tests/bench/train/run.sh [BUILD_DIR] [THREADS] [ROUNDS]   (BUILD_DIR holds tests/bench/train/train_bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
threads=${2:-2}
rounds=${3:-3}
bench="$build/tests/bench/train/train_bench"
[ -x "$bench" ] || { echo "run.sh: $bench not found; build the train_bench target first" >&2; exit 1; }
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || { echo "run.sh: PyTorch missing (apt-get install python3-torch)" >&2; exit 1; }
ours="" theirs=""
i=0
while [ "$i" -lt "$rounds" ]; do
  out=$("$bench" --threads "$threads" --steps 60)
  printf '%s\n' "$out"
  o=$(printf '%s\n' "$out" | sed -n 's/^RESULT images_per_s=//p')
  out=$(OMP_NUM_THREADS=$threads "$python" "$here/pytorch_cifar10.py" --threads "$threads" --steps 60)
  printf '%s\n' "$out"
  t=$(printf '%s\n' "$out" | sed -n 's/^RESULT images_per_s=//p')
  ours="$ours $o" theirs="$theirs $t"
  i=$((i + 1))
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mo=$(median "$ours") mt=$(median "$theirs")
echo "batchai train_bench: $ours img/s (median $mo)"
echo "pytorch            : $theirs img/s (median $mt)"
awk -v a="$mo" -v b="$mt" 'BEGIN { printf "ratio batchai/pytorch = %.2fx (target >= 1.5x)\n", a / b }'
