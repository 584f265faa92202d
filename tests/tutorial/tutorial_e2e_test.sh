#!/usr/bin/env bash
# Runs examples/horovod-cifar10/tutorial.sh with small settings (2 nodes, synthetic data, 2 epochs of
# 50 steps per worker) against a temporary BATCHAI_HOME and checks every step's output.
# Usage: tutorial_e2e_test.sh BATCHAI_EXECUTABLE
set -uo pipefail
exe="${1:?usage: tutorial_e2e_test.sh BATCHAI_EXECUTABLE}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d -t batchai-tutorial-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
log="$tmp/tutorial.log"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect <description> <extended regex>: the log has a line matching the regex.
expect() { grep -Eq -- "$2" "$log" || fail "$1 (no line matches /$2/)"; }
# section <title>: the log from "### <title>" to the next "### " heading.
section() { awk -v t="### $1" 'index($0, t) == 1 { on = 1; next } on && /^### / { exit } on' "$log"; }
# (grep reads the whole section: with pipefail, `grep -q` quitting early would fail the pipeline.)
expect_in() { section "$1" | grep -E -- "$3" > /dev/null || fail "$2 (no line of section '$1' matches /$3/)"; }

# HOME: cluster create --generate-ssh-keys writes ~/.ssh, as az does. The simulated delay is long
# enough that the first `cluster show` still sees `resizing` on a busy machine.
mkdir -p "$tmp/home"
HOME="$tmp/home" BATCHAI="$exe" BATCHAI_HOME="$tmp/state" BATCHAI_SIM_DELAY_S=4 STEP_PAUSE=0.5 \
  NODES=2 SYNTHETIC=512 EPOCHS=2 STEPS_PER_EPOCH=50 VALIDATION_IMAGES=200 DOWNLOAD_DIR="$tmp/downloads" \
  bash "$root/examples/horovod-cifar10/tutorial.sh" > "$log" 2>&1
rc=$?
cat "$log"
echo "--- checks"
[ "$rc" = 0 ] || fail "tutorial.sh exited with $rc"

expect "synthetic data announced" '^nodes: 2, data: synthetic'
expect_in "Create a resource group" "group table columns" '^Location +Name *$'
expect_in "Create a resource group" "group row" '^eastus +batchai\.horovod *$'
expect_in "Create a workspace and an experiment" "workspace table" '^CreationTime +Location +Name +ProvisioningState'
expect_in "Create a workspace and an experiment" "workspace row" ' batchaidev +succeeded '
expect_in "Create a workspace and an experiment" "experiment row" ' cifar +succeeded '
cluster_header='^Name +Resource Group +Workspace +VM Size +State +Idle +Running +Preparing +Leaving +Unusable *$'
expect_in "Create a 2-node" "cluster table columns" "$cluster_header"
expect_in "Create a 2-node" "cluster resizing" '^nc6cluster +batchai\.horovod +batchaidev +STANDARD_NC6 +resizing '
expect_in "Create a 2-node" "cluster steady with 2 idle nodes" \
  '^nc6cluster +batchai\.horovod +batchaidev +STANDARD_NC6 +steady +2 +0 +0 +0 +0 *$'
expect_in "Create a 2-node" "auto-storage account name" '"storageAccountName": "[a-z0-9]+"'
expect_in "Create a storage account" "storage account row" '^cifar[0-9]+ +eastus +Succeeded'
expect_in "Create a storage account" "share and directory created" '"created": true'
expect_in "The training program" "trainer help" '^Usage: batchai train'
expect_in "Prepare the job configuration file" "job.json node count" '"nodeCount": 2,'
expect_in "Prepare the job configuration file" "job.json arguments" \
  '"commandLineArgs": "--dir=\$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar --synthetic=512 --epochs=2 --steps-per-epoch=50'
expect_in "Submit the job" "job create table" '^Name +NodeCount +ToolType +ExecutionState *$'
expect_in "Submit the job" "job row" '^cifar_distributed +2 +horovod +(queued|running) *$'
expect_in "Monitor the job" "executionState while running" '^"running"$'
expect_in "Monitor the job" "running nodes during the job" '"runningNodeCount": 2'
expect_in "Monitor the job" "file list columns" '^Name +Type +Size +Modified *$'
expect_in "Monitor the job" "stdout.txt listed" '^stdout\.txt +file '
expect_in "Monitor the job" "stderr.txt listed" '^stderr\.txt +file '
expect_in "Monitor the job" "per-node preparation logs" '^stdout-job_prep-[^ ]+\.txt +file '
expect_in "Monitor the job" "stream: epoch header" '^Epoch 1/2$'
expect_in "Monitor the job" "stream: second epoch" '^Epoch 2/2$'
expect_in "Monitor the job" "stream: Keras progress line" \
  '^50/50 \[=+\] - [0-9]+s [0-9]+ms/step - loss: [0-9.]+ - acc: [0-9.]+ - val_loss: [0-9.]+ - val_acc: [0-9.]+'
expect_in "Monitor the job" "stream: saved model" '^Saved trained model at .*/myshare/cifar/saved_models/keras_cifar10_trained_model\.h5'
expect_in "Monitor the job" "stream: test accuracy" '^Test accuracy: [0-9.]+$'
expect_in "Monitor the job" "job succeeded" '^succeeded +0 *$'
expect_in "Download the trained model" "model listed in the share" '^keras_cifar10_trained_model\.h5 *$'
model="$tmp/downloads/keras_cifar10_trained_model.h5"
if [ -f "$model" ]; then
  [ "$(head -c 8 "$model" | od -An -c | tr -d ' ')" = '211HDF\r\n032\n' ] || fail "the download is not an HDF5 file"
  [ "$(stat -c %s "$model")" -gt 4000000 ] || fail "the model file is smaller than 1,250,858 float32 weights"
else
  fail "the model was not downloaded to $model"
fi
expect_in "Clean up resources" "resize to 0" '^nc6cluster +0 *$'
section "Clean up resources" | grep 'batchai\.horovod *$' > /dev/null && fail "group batchai.horovod still listed after delete"
HOME="$tmp/home" BATCHAI_HOME="$tmp/state" "$exe" group show --name batchai.horovod > /dev/null 2>&1
[ $? = 3 ] || fail "group show after delete should exit 3 (not found)"

[ "$failures" = 0 ] && echo "all tutorial checks passed" || echo "$failures tutorial check(s) failed"
[ "$failures" = 0 ]
