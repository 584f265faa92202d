#!/usr/bin/env bash
# The Batch AI Horovod tutorial ("Train a distributed model with Horovod"), step by step, with
# `batchai` in place of `az batchai` / `az`. Runs against a fresh $BATCHAI_HOME unless one is set.
#
# Environment: BATCHAI (the executable, default build/src/cli/batchai), BATCHAI_HOME,
# NODES (default 4), STEP_PAUSE (seconds between `cluster show` polls, default 1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
BATCHAI="${BATCHAI:-$root/build/src/cli/batchai}"
export BATCHAI_HOME="${BATCHAI_HOME:-$(mktemp -d -t batchai-tutorial.XXXXXX)}"
NODES="${NODES:-4}"
STEP_PAUSE="${STEP_PAUSE:-1}"
rg=batchai.horovod ws=batchaidev cluster=nc6cluster

step() { printf '\n### %s\n' "$*"; }
run() { printf '$ batchai %s\n' "$*"; "$BATCHAI" "$@"; }

echo "BATCHAI_HOME=$BATCHAI_HOME"
step "Create a resource group, a workspace and an experiment"
run group create --name "$rg" --location eastus -o table
run batchai workspace create --resource-group "$rg" --workspace "$ws" --location eastus -o table
run batchai experiment create --resource-group "$rg" --workspace "$ws" --name cifar -o table

step "Create a $NODES-node Standard_NC6 cluster and watch it allocate"
run batchai cluster create --resource-group "$rg" --workspace "$ws" --name "$cluster" \
  --vm-priority dedicated --vm-size Standard_NC6 --target "$NODES" --use-auto-storage --generate-ssh-keys -o none
for _ in $(seq 1 120); do
  run batchai cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" -o table
  state=$("$BATCHAI" batchai cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" \
    --query "allocationState" -o tsv)
  idle=$("$BATCHAI" batchai cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" \
    --query "nodeStateCounts.idleNodeCount" -o tsv)
  [ "$state" = steady ] && [ "$idle" = "$NODES" ] && break
  sleep "$STEP_PAUSE"
done
run batchai cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" \
  --query "nodeSetup.mountVolumes.azureFileShares[0].{storageAccountName:accountName}"

step "Clean up"
run batchai cluster resize --name "$cluster" --resource-group "$rg" --target 0 --workspace "$ws" -o table
run group delete --name "$rg" --yes
