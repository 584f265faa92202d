#!/usr/bin/env bash
# Debian's real `az` 2.45 (package azure-cli) against `batchai serve` (issue 16, docs/serve.md
# "The az command line"): the lines the server prints, then the tutorial's az commands that the
# server serves (no storage data plane yet). Usage: az_tutorial.sh BATCHAI_EXE
# Fails (not skips) when az is missing, naming the package.
set -uo pipefail
EXE=$(realpath "$1")
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
step batchai workspace create -g rg1 -n ws1 -l eastus --query provisioningState -o tsv; expect succeeded
step batchai experiment create -g rg1 -w ws1 -n exp1 --query name -o tsv; expect exp1
step batchai cluster create -g rg1 -w ws1 -n nc6 --image UbuntuLTS --vm-size Standard_NC6 --target 1 \
  -u demoUser -p 'Passw0rd!' --query '[name, vmSize, scaleSettings.manual.targetNodeCount]' -o tsv
expect "$(printf 'nc6\nSTANDARD_NC6\n1')"
for _ in $(seq 100); do
  step batchai cluster show -g rg1 -w ws1 -n nc6 --query '[allocationState, currentNodeCount]' -o tsv
  [ "$STEP_OUT" = "$(printf 'steady\n1')" ] && break; sleep 0.2
done
expect "$(printf 'steady\n1')"
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
step batchai cluster resize -g rg1 -w ws1 -n nc6 --target 0 --query scaleSettings.manual.targetNodeCount -o tsv
expect 0
step group delete -n rg1 -y
step group exists -n rg1;                                                 expect false
T1=$(date +%s.%N)

kill -TERM "$SERVER"; wait "$SERVER"; rc=$?; SERVER=""
[ "$rc" -eq 0 ] || fail "batchai serve exited $rc on SIGTERM"
echo "az tutorial: OK in $(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }') s"
