#!/usr/bin/env bash
# The tutorial (examples/horovod-cifar10/tutorial.sh) on a Slurm partition (SLURM_PARTITION): its
# own private Slurm (private_slurm.sh, 3 nodes, PORT_BASE from ctest's environment), 2 nodes,
# synthetic data, 1 short epoch. Checks that the job succeeded through Slurm and that the model it
# saved is an HDF5 file. Every daemon is stopped at the end, also on failure (docs/slurm.md).
# Usage: slurm_tutorial_test.sh BATCHAI_EXECUTABLE SLURM_BASE
set -uo pipefail
exe="${1:?usage: slurm_tutorial_test.sh BATCHAI_EXECUTABLE SLURM_BASE}"
base="${2:?usage: slurm_tutorial_test.sh BATCHAI_EXECUTABLE SLURM_BASE}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d -t batchai-slurm-tutorial.XXXXXX)"
chmod 755 "$tmp"   # the job runs below it as the submitting user, started by slurmd
cleanup() {
  bash "$here/private_slurm.sh" stop "$base" > /dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log="$tmp/tutorial.log"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# section <title>: the log from "### <title>" to the next "### " heading.
section() { awk -v t="### $1" 'index($0, t) == 1 { on = 1; next } on && /^### / { exit } on' "$log"; }
expect_in() { section "$1" | grep -E -- "$3" > /dev/null || fail "$2 (no line of section '$1' matches /$3/)"; }

bash "$here/private_slurm.sh" start "$base" 3 || { echo "FAIL: the private Slurm did not start"; exit 1; }
export SLURM_CONF="$base/etc/slurm.conf"
jobcomp=$(sed -n 's/^JobCompLoc=//p' "$SLURM_CONF")

mkdir -p "$tmp/home"
start=$(date +%s.%N)
HOME="$tmp/home" BATCHAI="$exe" BATCHAI_HOME="$tmp/state" SLURM_PARTITION=batchai STEP_PAUSE=0.5 \
  NODES=2 SYNTHETIC=256 EPOCHS=1 STEPS_PER_EPOCH=8 VALIDATION_IMAGES=64 DOWNLOAD_DIR="$tmp/downloads" \
  bash "$root/examples/horovod-cifar10/tutorial.sh" > "$log" 2>&1
rc=$?
end=$(date +%s.%N)
cat "$log"
echo "--- checks"
echo "tutorial.sh on Slurm: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall time"
[ "$rc" = 0 ] || fail "tutorial.sh exited with $rc"

grep -Eq '^Slurm partition: batchai ' "$log" || fail "the Slurm partition was not announced"
expect_in "Create a 2-node" "cluster created on the partition" '^\$ batchai cluster create .* --slurm-partition batchai '
expect_in "Create a 2-node" "the partition's 3 nodes idle" \
  '^nc6cluster +batchai\.horovod +batchaidev +STANDARD_NC6 +steady +3 +0 +0 +0 +0 *$'
expect_in "Monitor the job" "per-node preparation logs named for Slurm nodes" '^stdout-job_prep-node[0-9]+\.txt +file '
expect_in "Monitor the job" "stream: epoch header" '^Epoch 1/1$'
expect_in "Monitor the job" "stream: test accuracy" '^Test accuracy: [0-9.]+$'
expect_in "Monitor the job" "job succeeded" '^succeeded +0 *$'
# Slurm's own record: the job ran through sbatch on two of its nodes and completed. batchai records
# the outcome before the batch script exits, so Slurm's record may come a moment later.
record=""
for _ in $(seq 1 60); do
  record=$(grep ' Name=cifar_distributed ' "$jobcomp" 2>/dev/null | tail -n 1)
  [ -n "$record" ] && break
  sleep 0.5
done
[[ "$record" == *"JobState=COMPLETED "* ]] || fail "Slurm has no COMPLETED record of cifar_distributed: '$record'"
[[ "$record" =~ NodeCnt=2( |$) ]] || fail "Slurm's record does not show 2 nodes: '$record'"
model="$tmp/downloads/keras_cifar10_trained_model.h5"
if [ -f "$model" ]; then
  # the HDF5 signature: 89 48 44 46 0d 0a 1a 0a
  [ "$(head -c 8 "$model" | od -An -tx1 | tr -d ' \n')" = 894844460d0a1a0a ] || fail "the download is not an HDF5 file"
else
  fail "the model was not downloaded to $model"
fi

[ "$failures" = 0 ] && echo "all Slurm tutorial checks passed" || echo "$failures Slurm tutorial check(s) failed"
[ "$failures" = 0 ]
