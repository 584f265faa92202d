#!/usr/bin/env bash
# Debian's real `az` 2.45 (package azure-cli) against `batchai serve` (issue 16, docs/serve-clients.md
# "The az command line"): the lines the server prints, then the tutorial's az commands that the
# server serves, the storage data plane included (Azure Files and Blob, SharedKey), and the
# tutorial's Horovod job (examples/horovod-cifar10/job.json, a short synthetic schedule on 2 nodes)
# streamed with `az batchai job file stream` and its model downloaded with az. Usage:
# az_tutorial.sh BATCHAI_EXE
# Fails (not skips) when az is missing, naming the package.
set -uo pipefail
EXE=$(realpath "$1")
EXAMPLE=$(cd "$(dirname "$0")/../../examples/horovod-cifar10" && pwd)/job.json
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v az >/dev/null || fail "az is missing: apt-get install azure-cli"

W=$(mktemp -d "${TMPDIR:-/tmp}/batchai-az-XXXXXX")
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
export HOME=$W/home BATCHAI_HOME=$W/batchai BATCHAI_SIM_DELAY_S=0
export AZURE_CONFIG_DIR=$W/azure AZURE_CORE_COLLECT_TELEMETRY=0 AZURE_CORE_OUTPUT=json
mkdir -p "$HOME" && cd "$W" || fail "no work folder"

"$EXE" serve --port 0 >"$W/serve.out" 2>"$W/serve.err" &
SERVER=$!
for _ in $(seq 200); do grep -q '^az login ' "$W/serve.out" 2>/dev/null && break; sleep 0.05; done
grep -q '^az login ' "$W/serve.out" || fail "batchai serve printed no az lines: $(cat "$W/serve.err")"

# az prints a deprecation WARNING for every batchai command on stderr (harmless); keep stderr
# for the failure message only. STEP_OUT holds stdout of the last step.
STEP_OUT=""
step() {
  local rc t0
  t0=$(date +%s.%N)
  STEP_OUT=$(az "$@" 2>"$W/step.err"); rc=$?
  [ "$rc" -eq 0 ] || fail "az $* exited $rc: $(grep -v 'deprecated' "$W/step.err" | tail -5)"
  echo "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%5.1f s", b - a }')  az ${*:1:4}"
}
expect() { [ "$STEP_OUT" = "$1" ] || fail "expected '$1', az printed '$STEP_OUT'"; }

T0=$(date +%s.%N)
# Exactly the lines batchai serve printed (each begins with `export ` or `az `).
while IFS= read -r line; do
  case "$line" in
    export\ *) eval "$line" ;;
    az\ *) eval "${line/#az /step }" ;;
    *) fail "unexpected line from batchai serve: $line" ;;
  esac
done <"$W/serve.out"
[ -n "${REQUESTS_CA_BUNDLE:-}" ] || fail "no REQUESTS_CA_BUNDLE line"

step account show --query state -o tsv;                                   expect Enabled
step group create -n rg1 -l eastus --query properties.provisioningState -o tsv; expect Succeeded
step group update -n rg1 --tags team=ml --query tags.team -o tsv;          expect ml
step batchai workspace create -g rg1 -n ws1 -l eastus --query provisioningState -o tsv; expect succeeded
step batchai experiment create -g rg1 -w ws1 -n exp1 --query name -o tsv; expect exp1
step batchai cluster create -g rg1 -w ws1 -n nc6 --image UbuntuLTS --vm-size Standard_NC6 --target 2 \
  -u demoUser -p 'Passw0rd!' --query '[name, vmSize, scaleSettings.manual.targetNodeCount]' -o tsv
expect "$(printf 'nc6\nSTANDARD_NC6\n2')"
for _ in $(seq 100); do
  step batchai cluster show -g rg1 -w ws1 -n nc6 --query '[allocationState, currentNodeCount]' -o tsv
  [ "$STEP_OUT" = "$(printf 'steady\n2')" ] && break; sleep 0.2
done
expect "$(printf 'steady\n2')"
step batchai cluster show -g rg1 -w ws1 -n nc6 -o table
[[ "$STEP_OUT" == *nc6* ]] || fail "cluster show -o table: $STEP_OUT"

cat >job.json <<'EOF'
{
  "$schema": "https://raw.githubusercontent.com/Azure/BatchAI/master/schemas/2018-05-01/job.json",
  "properties": {
    "nodeCount": 1,
    "customToolkitSettings": {"commandLine": "echo hello from $FOO"},
    "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
    "environmentVariables": [{"name": "FOO", "value": "bar"}]
  }
}
EOF
step batchai job create -g rg1 -w ws1 -e exp1 -n job1 -c nc6 -f job.json --query '[name, toolType]' -o tsv
expect "$(printf 'job1\ncustom')"
for _ in $(seq 150); do
  step batchai job show -g rg1 -w ws1 -e exp1 -n job1 --query executionState -o tsv
  [ "$STEP_OUT" = succeeded ] || [ "$STEP_OUT" = failed ] && break; sleep 0.2
done
[ "$STEP_OUT" = succeeded ] || fail "job1 is $STEP_OUT: $(az batchai job show -g rg1 -w ws1 -e exp1 -n job1 \
  --query executionInfo -o json 2>/dev/null)"
step batchai job show -g rg1 -w ws1 -e exp1 -n job1 -o table
[[ "$STEP_OUT" == *job1*nc6* ]] || fail "job show -o table: $STEP_OUT"
step batchai job file list -g rg1 -w ws1 -e exp1 -j job1 --query "[?name=='stdout.txt'].contentLength" -o tsv
expect "$(printf 'hello from bar\n' | wc -c)"
# az GETs the listed downloadUrl (a link on the server, no token) with a Range header.
step batchai job file stream -g rg1 -w ws1 -e exp1 -j job1 -f stdout.txt;  expect "hello from bar"

# The tutorial's storage steps, as it writes them: an account, the share `logs`, a directory,
# the script uploaded (and a file over 4 MiB, so az uploads it in ranges), listed, downloaded.
SA=batchaistore1
step storage account create -n $SA --sku Standard_LRS -g rg1 -l eastus --query provisioningState -o tsv
expect Succeeded
step storage share create -n logs --account-name $SA --query created -o tsv;          expect true
step storage directory create -n horovod_cifar10 -s logs --account-name $SA --query created -o tsv; expect true
printf 'print("hello from cifar10_cnn.py")\n' >cifar10_cnn.py
head -c $((5 * 1024 * 1024 + 123)) /dev/urandom >big.bin
step storage file upload -s logs --source cifar10_cnn.py -p horovod_cifar10 --account-name $SA
step storage file upload -s logs --source big.bin -p horovod_cifar10/big.bin --account-name $SA
step storage file list -s logs -p horovod_cifar10 --account-name $SA --query "[].[name, properties.contentLength]" -o tsv
expect "$(printf 'big.bin\t%s\ncifar10_cnn.py\t%s' "$(stat -c %s big.bin)" "$(stat -c %s cifar10_cnn.py)")"
step storage file download -s logs -p horovod_cifar10/big.bin --dest ./big.back --account-name $SA
cmp -s big.bin big.back || fail "big.bin came back different"

# A job that mounts the share (azureFileShares) and writes into it; its file, downloaded.
cat >job2.json <<'EOF2'
{
  "properties": {
    "nodeCount": 1,
    "mountVolumes": {"azureFileShares": [{"accountName": "<AZURE_BATCHAI_STORAGE_ACCOUNT>",
      "azureFileUrl": "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/logs",
      "credentials": {"accountKey": "<AZURE_BATCHAI_STORAGE_KEY>"}, "relativeMountPath": "logs"}]},
    "customToolkitSettings": {"commandLine": "mkdir -p $AZ_BATCHAI_JOB_MOUNT_ROOT/logs/output && python3 $AZ_BATCHAI_JOB_MOUNT_ROOT/logs/horovod_cifar10/cifar10_cnn.py > $AZ_BATCHAI_JOB_MOUNT_ROOT/logs/output/result.txt"},
    "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/logs"
  }
}
EOF2
step batchai job create -g rg1 -w ws1 -e exp1 -n job2 -c nc6 -f job2.json --storage-account-name $SA \
  --query name -o tsv
expect job2
for _ in $(seq 150); do
  step batchai job show -g rg1 -w ws1 -e exp1 -n job2 --query executionState -o tsv
  [ "$STEP_OUT" = succeeded ] || [ "$STEP_OUT" = failed ] && break; sleep 0.2
done
[ "$STEP_OUT" = succeeded ] || fail "job2 is $STEP_OUT"
step storage file download -s logs -p output/result.txt --dest ./result.txt --account-name $SA
[ "$(cat result.txt)" = "hello from cifar10_cnn.py" ] || fail "result.txt holds '$(cat result.txt)'"

# The tutorial's Horovod job: its job file as the example ships it (share `myshare` mounted with
# the account's placeholders), 2 nodes, a short synthetic schedule; stdout streamed while it
# trains, then the model downloaded from the share.
step storage share create -n myshare --account-name $SA --query created -o tsv;       expect true
python3 - "$EXAMPLE" >horovod.json <<'PY' || fail "could not adapt $EXAMPLE"
import json, sys
job = json.load(open(sys.argv[1]))
p = job["properties"]
p["nodeCount"] = 2
# Its image (tensorflow/tensorflow:1.8.0-gpu) cannot be pulled offline: the job runs on the host,
# as tutorial.sh runs it when the image is not in the local store (containers: tests/jobs).
p.pop("containerSettings", None)
p["horovodSettings"]["commandLineArgs"] += (" --synthetic=256 --epochs=1 --steps-per-epoch=8"
                                            " --validation-images=64 --batch-size=16 --threads=1")
json.dump(job, sys.stdout, indent=2)
PY
step batchai job create -g rg1 -w ws1 -e exp1 -n cifar -c nc6 -f horovod.json --storage-account-name $SA \
  --query '[toolType, nodeCount]' -o tsv
expect "$(printf 'horovod\n2')"
step batchai job file stream -g rg1 -w ws1 -e exp1 -j cifar -f stdout.txt
for want in 'Epoch 1/1' 'Test accuracy'; do
  [[ "$STEP_OUT" == *"$want"* ]] || fail "the stream has no '$want': $STEP_OUT"
done
step batchai job show -g rg1 -w ws1 -e exp1 -n cifar --query executionState -o tsv;   expect succeeded
step storage file download -s myshare -p cifar/saved_models/keras_cifar10_trained_model.h5 --dest ./model.h5 \
  --account-name $SA
[ "$(head -c 8 model.h5 | od -An -tx1 | tr -d ' ')" = 894844460d0a1a0a ] || fail "model.h5 is not an HDF5 file"
echo "       model.h5: $(stat -c %s model.h5) bytes"

# Blob: a container, uploads (a small file, and the 5 MiB one), downloads.
step storage container create -n models --account-name $SA --query created -o tsv;     expect true
step storage blob upload -c models -f cifar10_cnn.py -n scripts/cifar10_cnn.py --account-name $SA
step storage blob download -c models -n scripts/cifar10_cnn.py -f ./blob.back --account-name $SA
cmp -s cifar10_cnn.py blob.back || fail "the blob came back different"
# over 4 MiB: az sends it whole (one Put Blob) up to 64 MiB
step storage blob upload -c models -f big.bin -n data/big.bin --account-name $SA
step storage blob download -c models -n data/big.bin -f ./bigblob.back --account-name $SA
cmp -s big.bin bigblob.back || fail "the 5 MiB blob came back different"

step batchai cluster resize -g rg1 -w ws1 -n nc6 --target 0 --query scaleSettings.manual.targetNodeCount -o tsv
expect 0
step group delete -n rg1 -y
step group exists -n rg1;                                                 expect false
T1=$(date +%s.%N)

kill -TERM "$SERVER"; wait "$SERVER"; rc=$?; SERVER=""
[ "$rc" -eq 0 ] || fail "batchai serve exited $rc on SIGTERM"
echo "az tutorial: OK in $(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }') s"
