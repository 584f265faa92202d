# Source on the GPU machine: . tests/bench/cuda/bundle_env.sh BUNDLE.tar.xz  (see bundle.sh)
# Unpacks once into /tmp/bund; Open MPI's files go to their Debian paths only where nothing is there
# yet (never overwriting); then LD_LIBRARY_PATH gets the bundle and the machine's CUDA libraries.
B=/tmp/bund
if [ ! -x $B/bin/batchai ]; then
  mkdir -p $B && xz -dc "$1" | tar -C $B -xf - && tar -C / --skip-old-files -xf $B/ompi.tar
fi
cuda_dirs=""
for l in libcudnn.so.9 libnccl.so.2 libcublas.so.13 libcublasLt.so.13 libcudart.so.13; do
  p=$(find /usr/local /opt /usr/lib -name $l 2>/dev/null | head -1)
  if [ -n "$p" ]; then cuda_dirs="$cuda_dirs:$(dirname "$p")"; else echo "bundle_env: no $l here" >&2; fi
done
export LD_LIBRARY_PATH=$B/bin:$B/lib$cuda_dirs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
