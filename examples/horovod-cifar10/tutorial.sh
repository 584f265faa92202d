#!/usr/bin/env bash
# The Batch AI Horovod tutorial ("Train a distributed model with Horovod"), end to end, with
# `batchai` in place of `az batchai` / `az`. Every step prints the command and its real output.
#
# Usage: tutorial.sh [--data-dir DIR]
# Environment (all optional):
#   BATCHAI            the executable (default build/src/cli/batchai, else batchai on PATH)
#   BATCHAI_HOME       state, nodes and storage (default: a fresh temporary folder)
#   NODES              cluster size and job nodeCount (default 4, as in the tutorial)
#   PROCESSES          the job's horovodSettings.processCount (default: one per node)
#   TRAIN_ARGS         more options for the trainer, e.g. "--allreduce mpi"
#   EPOCHS, STEPS_PER_EPOCH   training schedule (default 1 epoch of 40 steps per worker: a short
#                      run for a 2-core machine); SCHEDULE=full trains the tutorial's schedule
#                      (ceil(100 / NODES) epochs of 1563 steps per worker)
#   DATA_DIR or BATCHAI_CIFAR10_DIR   folder with the CIFAR-10 binary files; uploaded to the share
#   SYNTHETIC          N: train on N generated images (no CIFAR-10 needed); also the fallback when
#                      no data is given and the download site cannot be reached (default 2048)
#   VALIDATION_IMAGES  validate each epoch on the first N test images (default: all)
#   DOWNLOAD_DIR       where `storage file download` puts the model (default $BATCHAI_HOME/downloads)
#   STEP_PAUSE         seconds between polls (default 1); CLEANUP=0 keeps the resources
#   WAIT_LIMIT         seconds to wait for the nodes, and for the job to leave the queue (default 300)
#   IMAGE              the job's container image (containerSettings): unset, the job's
#                      tensorflow/tensorflow:1.8.0-gpu when the local Podman store has it (it lacks
#                      mpirun: the cloud tutorial installed MPI in jobPreparation), else the job runs
#                      on the host; "host" always on the host; any other image (with Open MPI and
#                      /bin/sh, e.g. one built offline as docs/tutorial.md shows) runs it in containers
#   SLURM_PARTITION    run on this Slurm partition instead of simulated nodes: the cluster is
#                      created with --slurm-partition and the job goes through sbatch. The controller
#                      is the one SLURM_CONF (or the system's slurm.conf) names; the partition needs
#                      NODES idle nodes and BATCHAI_SHARED_DIR (default BATCHAI_HOME) on a folder its
#                      nodes share at the same path (docs/slurm.md)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) DATA_DIR="${2:?--data-dir needs a folder}"; shift 2 ;;
    --data-dir=*) DATA_DIR="${1#--data-dir=}"; shift ;;
    -h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tutorial.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

# The build tree's executable when this is the source tree, else (installed under
# share/batchai/examples) the batchai on PATH.
if [ -z "${BATCHAI:-}" ]; then
  BATCHAI="$root/build/src/cli/batchai"
  [ -x "$BATCHAI" ] || BATCHAI="$(command -v batchai || true)"
fi
if [ -z "$BATCHAI" ] || [ ! -x "$BATCHAI" ]; then
  echo "tutorial.sh: ${BATCHAI:-batchai} is not built yet: run cmake/build.sh first (or set BATCHAI)." >&2
  exit 1
fi
export BATCHAI_HOME="${BATCHAI_HOME:-$(mktemp -d -t batchai-tutorial.XXXXXX)}"
NODES="${NODES:-4}"
STEP_PAUSE="${STEP_PAUSE:-1}"
WAIT_LIMIT="${WAIT_LIMIT:-300}"
DOWNLOAD_DIR="${DOWNLOAD_DIR:-$BATCHAI_HOME/downloads}"
rg=batchai.horovod ws=batchaidev cluster=nc6cluster experiment=cifar job=cifar_distributed
storage="cifar$(date +%s | tail -c 9)"  # storage account names are global in Azure: make it unique
work="$BATCHAI_HOME/tutorial"
mkdir -p "$work" "$DOWNLOAD_DIR"

slurm_args=()
[ -n "${SLURM_PARTITION:-}" ] && slurm_args=(--slurm-partition "$SLURM_PARTITION")

step() { printf '\n### %s\n' "$*"; }
note() { printf '# %s\n' "$*"; }
# run <args>: print the command as a person types it, then run it (its output is the step's output).
run() { printf '$ batchai%s\n' "$(shown "$@")"; "$BATCHAI" "$@"; }
# shown <args>: the arguments as one would type them (quoted when they hold spaces or specials).
shown() {
  local a out=""
  for a in "$@"; do
    if [[ "$a" =~ [^][A-Za-z0-9_./:=,@%+-] ]]; then out+=" \"$a\""; else out+=" $a"; fi
  done
  printf '%s' "$out"
}
quiet() { "$BATCHAI" "$@" 2>/dev/null; }
have_cifar10() {
  local f
  for f in data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin; do
    [ -f "$1/$f" ] || return 1
  done
}

# Where the images come from: given data (uploaded to the share), the official download (done by
# the trainer inside the job, as Keras' cifar10.load_data() does), or a small synthetic set.
data_args="" data_mode=""
DATA_DIR="${DATA_DIR:-${BATCHAI_CIFAR10_DIR:-}}"
if [ -n "$DATA_DIR" ]; then
  if ! have_cifar10 "$DATA_DIR"; then
    echo "tutorial.sh: $DATA_DIR does not hold the CIFAR-10 binary files (data_batch_1..5.bin, test_batch.bin)." >&2
    echo "Get them from https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz or leave DATA_DIR unset." >&2
    exit 1
  fi
  data_mode=local data_args='--data-dir=$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar/data'
elif [ -n "${SYNTHETIC:-}" ]; then
  data_mode=synthetic data_args="--synthetic=$SYNTHETIC"
elif command -v curl >/dev/null && curl -sfI --max-time 10 https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz >/dev/null 2>&1; then
  data_mode=download data_args='--download --data-dir=$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar/data'
else
  SYNTHETIC=2048
  data_mode=synthetic data_args="--synthetic=$SYNTHETIC"
  echo "!!! No CIFAR-10 data given (DATA_DIR, --data-dir or BATCHAI_CIFAR10_DIR) and the download site"
  echo "!!! cannot be reached: training on $SYNTHETIC SYNTHETIC images instead. Accuracy figures below"
  echo "!!! are NOT CIFAR-10 figures."
fi
schedule_args=""
if [ "${SCHEDULE:-short}" != full ]; then
  schedule_args="--epochs=${EPOCHS:-1} --steps-per-epoch=${STEPS_PER_EPOCH:-40}"
fi
[ -n "${VALIDATION_IMAGES:-}" ] && schedule_args="$schedule_args --validation-images=$VALIDATION_IMAGES"
if [ -n "${TRAIN_ARGS:-}" ]; then
  [[ "$TRAIN_ARGS" =~ ^[-A-Za-z0-9=.,\ ]+$ ]] || { echo "tutorial.sh: TRAIN_ARGS may hold letters, digits, spaces and - = . , only" >&2; exit 2; }
  schedule_args="$schedule_args $TRAIN_ARGS"
fi

echo "BATCHAI_HOME=$BATCHAI_HOME"
echo "nodes: $NODES, data: $data_mode, schedule: ${schedule_args:-full}"
[ -n "${SLURM_PARTITION:-}" ] && echo "Slurm partition: $SLURM_PARTITION (SLURM_CONF: ${SLURM_CONF:-not set, the system slurm.conf})"

# cluster_ready "<allocationState> <idle nodes>": whether the cluster can take the job.
cluster_ready() {
  if [ -n "${SLURM_PARTITION:-}" ]; then
    # A Slurm cluster shows every node of its partition (the target only bounds its jobs' nodes),
    # so it is ready once NODES of them are idle, not when exactly NODES are.
    local alloc=${1% *} idle=${1#* }
    [ "$alloc" = steady ] && [[ "$idle" =~ ^[0-9]+$ ]] && [ "$idle" -ge "$NODES" ]
  else
    [ "$1" = "steady $NODES" ]
  fi
}

step "Create a resource group"
run group create --name "$rg" --location eastus -o table

step "Create a workspace and an experiment"
run workspace create --resource-group "$rg" --workspace "$ws" --location eastus -o table
run experiment create --resource-group "$rg" --workspace "$ws" --name "$experiment" -o table

step "Create a $NODES-node Standard_NC6 cluster and watch it allocate"
run cluster create --resource-group "$rg" --workspace "$ws" --name "$cluster" --vm-priority dedicated \
  --vm-size Standard_NC6 --target "$NODES" --use-auto-storage --generate-ssh-keys ${slurm_args[@]+"${slurm_args[@]}"} -o none
last=""
deadline=$((SECONDS + WAIT_LIMIT))  # bounded by time, not polls: STEP_PAUSE=0 must not give up early
while [ "$SECONDS" -le "$deadline" ]; do
  row=$(quiet cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" -o table)
  # Print the table each time the cluster's state changes, not every poll.
  if [ "$row" != "$last" ]; then
    printf '$ batchai%s\n%s\n' "$(shown cluster show --name "$cluster" --workspace "$ws" \
      --resource-group "$rg" -o table)" "$row"
    last="$row"
  fi
  # The table's row: Name, Resource Group, Workspace, VM Size, State, Idle, ... (one word each).
  state=$(awk 'NR == 3 { print $5, $6 }' <<<"$row")
  cluster_ready "$state" && break
  sleep "$STEP_PAUSE"
done
cluster_ready "$state" || { echo "tutorial.sh: the cluster did not reach $NODES idle nodes" >&2; exit 1; }
run cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" \
  --query "nodeSetup.mountVolumes.azureFileShares[0].{storageAccountName:accountName}"

step "Create a storage account, the file share myshare and the directory cifar"
run storage account create --name "$storage" --resource-group "$rg" --location eastus --sku Standard_LRS \
  --query "{name:name, location:location, provisioningState:provisioningState}" -o table
run storage share create --name myshare --account-name "$storage"
run storage directory create --share-name myshare --name cifar --account-name "$storage"

step "The training program"
note "The tutorial downloads cifar_cnn_distributed.py (Keras + Horovod). Here the same network, optimizer"
note "and Horovod semantics are built into batchai: horovodSettings.pythonScriptFilePath 'batchai-train'"
note "runs 'batchai train <commandLineArgs>' in every MPI rank. Its options:"
run train -h | sed -n '1,/^Run /p' | sed '/^Run /d;/^$/d'

step "Upload the data to the share"
if [ "$data_mode" = local ]; then
  run storage directory create --share-name myshare --name cifar/data --account-name "$storage" -o none
  for f in data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin; do
    run storage file upload --share-name myshare --source "$DATA_DIR/$f" --path cifar/data \
      --account-name "$storage" -o none
  done
  run storage file list --share-name myshare --path cifar/data --account-name "$storage" -o table
elif [ "$data_mode" = download ]; then
  note "Nothing to upload: the trainer downloads CIFAR-10 into myshare/cifar/data inside the job (rank 0"
  note "first), as the tutorial's script does with keras.datasets.cifar10.load_data()."
else
  note "Nothing to upload: the job trains on $SYNTHETIC synthetic images (--synthetic=$SYNTHETIC)."
fi

step "Prepare the job configuration file (job.json)"
# The example job with this run's node count, data and schedule; placeholders stay for job create.
process_count=""
if [ -n "${PROCESSES:-}" ]; then
  [[ "$PROCESSES" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "tutorial.sh: PROCESSES must be 1..999, not '$PROCESSES'" >&2; exit 2; }
  process_count="\"processCount\": $PROCESSES,"
fi
sed -e "s/\"nodeCount\": 4/\"nodeCount\": $NODES/" \
  -e "s/\"horovodSettings\": {/\"horovodSettings\": {$process_count/" \
  -e "s#\"--dir=\\\$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar\"#\"--dir=\$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar $data_args $schedule_args\"#" \
  "$here/job.json" > "$work/job.json"
image="${IMAGE:-tensorflow/tensorflow:1.8.0-gpu}"
if [ -z "${IMAGE:-}" ] && ! podman image exists "$image" 2>/dev/null; then image=host; fi
if [ "$image" = host ]; then
  note "The job runs on the host: its containerSettings are left out (set IMAGE to run it in containers)."
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["properties"].pop("containerSettings"); json.dump(d, open(sys.argv[1], "w"), indent=4)' "$work/job.json"
else
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["properties"]["containerSettings"]["imageSourceRegistry"]["image"]=sys.argv[2]; json.dump(d, open(sys.argv[1], "w"), indent=4)' "$work/job.json" "$image"
fi
cat "$work/job.json"

step "Submit the job"
run job create --cluster "$cluster" --name "$job" --resource-group "$rg" --workspace "$ws" \
  --experiment "$experiment" --config-file "$work/job.json" --storage-account-name "$storage" \
  --query "{name:name, nodeCount:nodeCount, toolType:toolType, executionState:executionState}" -o table

step "Monitor the job"
deadline=$((SECONDS + WAIT_LIMIT))
while [ "$SECONDS" -le "$deadline" ]; do
  execution=$(quiet job show --experiment "$experiment" --name "$job" --resource-group "$rg" \
    --workspace "$ws" --query "executionState" -o tsv)
  [ "$execution" != queued ] && break
  sleep "$STEP_PAUSE"
done
run job show --experiment "$experiment" --name "$job" --resource-group "$rg" --workspace "$ws" \
  --query "executionState"
run cluster show --name "$cluster" --workspace "$ws" --resource-group "$rg" --query "nodeStateCounts"
run job file list --experiment "$experiment" --job "$job" --resource-group "$rg" --workspace "$ws" \
  --output table
# Streams until the job completes.
run job file stream --experiment "$experiment" --file-name stdout.txt --job "$job" \
  --resource-group "$rg" --workspace "$ws"
run job wait --experiment "$experiment" --name "$job" --resource-group "$rg" --workspace "$ws" || {
  echo "tutorial.sh: the job failed; its stderr.txt:" >&2
  "$BATCHAI" job file stream --experiment "$experiment" --file-name stderr.txt --job "$job" \
    --resource-group "$rg" --workspace "$ws" >&2 || true
  exit 1
}
run job show --experiment "$experiment" --name "$job" --resource-group "$rg" --workspace "$ws" \
  --query "{executionState:executionState, exitCode:executionInfo.exitCode}" -o table
run job file list --experiment "$experiment" --job "$job" --resource-group "$rg" --workspace "$ws" \
  --output table

step "Download the trained model"
run storage file list --share-name myshare --path cifar/saved_models --account-name "$storage" -o table
run storage file download --share-name myshare --path cifar/saved_models/keras_cifar10_trained_model.h5 \
  --dest "$DOWNLOAD_DIR/keras_cifar10_trained_model.h5" --account-name "$storage" -o none
ls -l "$DOWNLOAD_DIR/keras_cifar10_trained_model.h5"

if [ "${CLEANUP:-1}" = 0 ]; then
  note "CLEANUP=0: resources kept in $BATCHAI_HOME"
  exit 0
fi
step "Clean up resources"
run cluster resize --name "$cluster" --resource-group "$rg" --target 0 --workspace "$ws" \
  --query "{name:name, targetNodeCount:scaleSettings.manual.targetNodeCount}" -o table
run group delete --name "$rg" --yes
run group list -o table
echo "Done. The trained model is $DOWNLOAD_DIR/keras_cifar10_trained_model.h5"
