#!/bin/sh
# Side by side on one GPU: batchai's CUDA backend (cuda_bench) and the same network in PyTorch
# (pytorch_gpu.py), at batch 32 and 256, TF32 on as both frameworks default for convolutions.
# usage: tests/bench/cuda/run.sh [BUILD_DIR] [--steps N] [--warmup N] [--tf32 0|1]
# BUILD_DIR must be configured with -DBATCHAI_CUDA=ON (default: build-cuda).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build-cuda}
[ $# -gt 0 ] && shift
if [ ! -d "$build" ]; then
  echo "run.sh: build folder $build not found; configure with:" >&2
  echo "  cmake -S $root -B $build -G Ninja -DBATCHAI_CUDA=ON" >&2
  exit 1
fi
cmake --build "$build" --target cuda_bench >/dev/null
binary=$(find "$build" -type f -name cuda_bench -perm -u+x | head -n 1)
if [ -z "$binary" ]; then
  echo "run.sh: cuda_bench was not built in $build (was the CUDA backend found? see cmake's output)" >&2
  exit 1
fi
"$binary" --batches 32,256 "$@"
python3 "$here/pytorch_gpu.py" --batches 32 256 "$@"
