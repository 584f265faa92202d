#!/bin/sh
# Pack a CUDA build made on this (Debian) machine for a GPU machine that lacks the Debian libraries:
# the trainer, the CUDA tests and benchmarks, every library they load except glibc, libstdc++ and
# CUDA's own (the GPU machine's CUDA, cuDNN and NCCL are used), and Open MPI's files (its plugins,
# mpiexec, orted: MPI_Init needs them even for one rank).
# Usage: tests/bench/cuda/bundle.sh BUILD_DIR OUT.tar.xz
# There:  . tests/bench/cuda/bundle_env.sh OUT.tar.xz   (unpacks once into /tmp/bund, sets the paths)
set -eu
build=$1 out=$2
bins="src/cli/batchai src/cli/libbatchai_trainer.so src/cli/libbatchai_cuda.so
      tests/train_cuda/train_cuda_tests tests/train_cuda/cuda_collectives_mpi
      tests/bench/cuda/cuda_bench tests/bench/cuda/conv_layouts"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for b in $bins; do cp "$build/$b" "$stage/bin/"; done
for b in "$stage"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/cuda|libc\.so|libm\.so|libdl\.so|libpthread|librt\.so|libstdc\+\+|libgcc_s|ld-linux' |
  xargs -r cp -L -t "$stage/lib/"
dpkg -L libopenmpi3 openmpi-bin openmpi-common libpmix2 |
  while read -r f; do [ -f "$f" ] && echo "${f#/}"; done > "$stage/ompi.list"
tar -C / -cf "$stage/ompi.tar" -T "$stage/ompi.list"
tar -C "$stage" -cf - bin lib ompi.tar | xz -T0 -6 > "$out"
ls -l "$out"
