#!/usr/bin/env bash
# batchai jobs on a Slurm whose nodes are hosts (issue 52; docs/slurm.md, "Hosts of their own"), on
# the rig the ctest fixture `multihost` started (rig.sh). The store lives in the login host's own
# folder, which compute hosts cannot see; only BATCHAI_SHARED_DIR is shared.
#
#   multihost_jobs_test.sh BATCHAI RIG_BASE SCENARIO...
#
# Scenarios: shared-folder store-hidden hosts exit-code launch-failure login-killed shared-full
# lost-host tutorial containers (MPI_IMAGE_TAR: the MPI image tests/jobs builds). Each prints what it saw; the script fails when any check failed.
set -uo pipefail
exe=${1:?usage: $0 BATCHAI RIG_BASE SCENARIO...}
base=${2:?usage: $0 BATCHAI RIG_BASE SCENARIO...}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rig="$here/rig.sh"
# shellcheck disable=SC1091
. "$base/rig.env" || { echo "FAIL: no rig in $base (rig.sh start)"; exit 1; }
export SLURM_CONF BATCHAI_SIM_DELAY_S=0
export BATCHAI_HOME="$RIG_LOGIN/home.$$" BATCHAI_SHARED_DIR="$RIG_SHARED/batchai.$$"
mkdir -p "$BATCHAI_HOME" "$BATCHAI_SHARED_DIR"
chmod 700 "$BATCHAI_HOME"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
b() { "$exe" "$@"; }
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
finish() {
  for j in $(b job list -g rg -w ws -e exp --query "[?executionState=='running' || executionState=='queued'].name" -o tsv 2>/dev/null); do
    b job terminate -g rg -w ws -e exp -n "$j" -y >/dev/null 2>&1
  done
  b group delete -n rg -y >/dev/null 2>&1
  rm -rf "$BATCHAI_HOME" "$BATCHAI_SHARED_DIR"
  [ ${#images[@]} = 0 ] || podman rmi -f "${images[@]}" > /dev/null 2>&1
}
trap finish EXIT

b group create -n rg -l eastus -o none && b workspace create -g rg -n ws -l eastus -o none &&
  b experiment create -g rg -w ws -n exp -o none || { echo "FAIL: cannot set up the workspace"; exit 1; }
nodes=$(wc -w <<< "$RIG_HOSTS")
b cluster create -g rg -w ws -n sc -s Standard_D1 -t "$nodes" --slurm-partition batchai -o none ||
  { echo "FAIL: cluster create on the rig's partition"; exit 1; }

# create_job NAME PROPERTIES_JSON: the job's config file from its properties.
create_job() {
  printf '{"properties": %s}\n' "$2" > "$BATCHAI_HOME/$1.json"
  b job create -g rg -w ws -e exp -c sc -n "$1" --config-file "$BATCHAI_HOME/$1.json" -o none
}
state() { b job show -g rg -w ws -e exp -n "$1" --query executionState -o tsv 2>/dev/null; }
# wait_end NAME LIMIT_S: waits (bounded) until the job ended; prints its document.
wait_end() {
  local deadline=$((SECONDS + $2)) s
  while [ $SECONDS -lt $deadline ]; do
    s=$(state "$1")
    [ "$s" = succeeded ] || [ "$s" = failed ] && break
    sleep 0.5
  done
  b job show -g rg -w ws -e exp -n "$1" -o json
}
wait_state() {  # NAME STATE LIMIT_S
  local deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.3; done
  return 1
}
stream() { b job file stream -g rg -w ws -e exp -j "$1" -f "$2" 2>/dev/null; }
custom() { printf '{"nodeCount": %s, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out", "customToolkitSettings": {"commandLine": %s}}' "$1" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$2")"; }
mpi() { printf '{"nodeCount": %s, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out", "customMpiSettings": {"processCount": %s, "commandLine": %s}}' "$1" "$2" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$3")"; }

# The shared folder is checked at cluster create: missing or not writable, a clear error, nothing made.
scenario_shared_folder() {
  local out
  out=$(BATCHAI_SHARED_DIR=/nonexistent/shared b cluster create -g rg -w ws -n bad -s Standard_D1 -t 1 \
    --slurm-partition batchai 2>&1)
  [ $? = 1 ] && [[ "$out" == *"/nonexistent/shared"*"BATCHAI_SHARED_DIR"* ]] && ok "missing shared folder refused: $out" ||
    fail "a missing shared folder was not refused: $out"
  [ -z "$(b cluster list -g rg -w ws --query "[?name=='bad'].name" -o tsv)" ] || fail "the refused cluster exists"
}

# The store is on the login host only: no compute host can open it, by any path.
scenario_store_hidden() {
  local h db="$BATCHAI_HOME/state.db"
  [ -f "$db" ] || { fail "no store on the login host at $db"; return; }
  for h in $RIG_HOSTS; do
    if "$rig" exec "$base" "$h" python3 -c "import sqlite3,sys; sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True).execute('select count(*) from jobs')" "$db" 2>/dev/null; then
      fail "host $h opened the store $db"
    else
      ok "host $h cannot open the store"
    fi
    "$rig" exec "$base" "$h" test -d "$BATCHAI_SHARED_DIR" || fail "host $h does not see the shared folder"
  done
}

# A 2-host MPI job: its ranks run on two hosts with their own names and addresses, with no
# loopback workaround in its environment.
scenario_hosts() {
  create_job hosts "$(mpi 2 2 'echo "rank=$OMPI_COMM_WORLD_RANK host=$(hostname) node=$SLURMD_NODENAME addr=$(hostname -I | tr -d " ") if_include=${OMPI_MCA_btl_tcp_if_include:-none}"')" ||
    { fail "job create hosts"; return; }
  local doc out
  doc=$(wait_end hosts 90)
  out=$(stream hosts stdout.txt)
  echo "$out" | sed 's/^/  /'
  [ "$(jq_ "d['executionState']" <<< "$doc")" = succeeded ] || fail "the MPI job did not succeed: $doc $(stream hosts stderr.txt)"
  [ "$(grep -o 'host=[^ ]*' <<< "$out" | sort -u | wc -l)" = 2 ] || fail "the ranks did not run on 2 hosts"
  [ "$(grep -o 'addr=[^ ]*' <<< "$out" | sort -u | wc -l)" = 2 ] || fail "the ranks did not have 2 addresses"
  grep -q 'if_include=none' <<< "$out" && ! grep -q 'if_include=lo' <<< "$out" || fail "a loopback workaround is set"
  local line
  while read -r line; do
    [[ "$line" =~ host=([^ ]+)\ node=([^ ]+)\ addr=([^ ]+) ]] || continue
    [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] || fail "hostname ${BASH_REMATCH[1]} is not SLURMD_NODENAME ${BASH_REMATCH[2]}"
    [[ " $RIG_ADDRS " == *" ${BASH_REMATCH[3]} "* ]] || fail "address ${BASH_REMATCH[3]} is not one of the rig's ($RIG_ADDRS)"
  done <<< "$out"
}

# The command's exit code comes back, from the runner's record.
scenario_exit_code() {
  create_job exit7 "$(custom 1 'echo on $(hostname); exit 7')" || { fail "job create exit7"; return; }
  local doc
  doc=$(wait_end exit7 60)
  [ "$(jq_ "d['executionState'], d['executionInfo']['exitCode']" <<< "$doc")" = "('failed', 7)" ] &&
    ok "exit 7 came back: $(stream exit7 stdout.txt)" || fail "exit code 7 was not reported: $doc"
}

# The runner cannot start on the compute host (the folder it runs in is on the login host's own
# disk): the job fails saying so, with Slurm's word; it never succeeds.
scenario_launch_failure() {
  local hidden="$RIG_LOGIN/not-shared.$$" doc
  mkdir -p "$hidden"
  BATCHAI_SHARED_DIR=$hidden b cluster create -g rg -w ws -n hidden -s Standard_D1 -t 1 --slurm-partition batchai -o none ||
    { fail "cluster create on a login-only folder"; return; }
  printf '{"properties": %s}\n' "$(custom 1 'echo ran')" > "$BATCHAI_HOME/nolaunch.json"
  BATCHAI_SHARED_DIR=$hidden b job create -g rg -w ws -e exp -c hidden -n nolaunch --config-file "$BATCHAI_HOME/nolaunch.json" -o none
  doc=$(BATCHAI_SHARED_DIR=$hidden wait_end nolaunch 60)
  echo "  $(jq_ "d['executionInfo']" <<< "$doc")"
  [ "$(jq_ "d['executionState']" <<< "$doc")" = failed ] || fail "a job whose runner never started is not failed: $doc"
  [ "$(jq_ "d['executionInfo']['errors'][0]['code']" <<< "$doc")" = JobRunnerNotStarted ] || fail "not JobRunnerNotStarted: $doc"
  BATCHAI_SHARED_DIR=$hidden b cluster delete -g rg -w ws -n hidden -y >/dev/null 2>&1
  rm -rf "$hidden"
}

# The login host's batchai processes killed mid-job, then started again: the outcome lands once.
scenario_login_killed() {
  create_job killed "$(custom 1 'sleep 4; exit 5')" || { fail "job create killed"; return; }
  wait_state killed running 30 || fail "the job did not start"
  local pids=() i first second
  for i in 1 2 3; do (while :; do b job show -g rg -w ws -e exp -n killed -o none; done) & pids+=($!); done
  sleep 3
  for i in "${pids[@]}"; do pkill -9 -P "$i" 2>/dev/null; kill -9 "$i" 2>/dev/null; done
  wait 2>/dev/null
  first=$(wait_end killed 60)
  sleep 1
  second=$(b job show -g rg -w ws -e exp -n killed -o json)
  [ "$(jq_ "d['executionState'], d['executionInfo']['exitCode']" <<< "$first")" = "('failed', 5)" ] ||
    fail "the outcome did not land with exit 5: $first"
  [ "$(jq_ "d['executionInfo']['endTime']" <<< "$first")" = "$(jq_ "d['executionInfo']['endTime']" <<< "$second")" ] &&
    ok "outcome landed once: $(jq_ "d['executionInfo']['endTime'], d['executionInfo']['exitCode']" <<< "$second")" ||
    fail "the outcome changed after it landed"
}

# The shared folder full: a clear error, the store intact, and the next job runs once there is room.
scenario_shared_full() {
  local filler="$RIG_SHARED/filler.$$" doc
  dd if=/dev/zero of="$filler" bs=1M 2>/dev/null
  create_job full "$(custom 1 'echo ran')"
  doc=$(wait_end full 30)
  rm -f "$filler"
  echo "  $(jq_ "d['executionInfo']" <<< "$doc")"
  [ "$(jq_ "d['executionState']" <<< "$doc")" = failed ] &&
    [[ "$(jq_ "d['executionInfo']['errors'][0]['message']" <<< "$doc")" == *"full"* ]] ||
    fail "a full shared folder did not fail the job clearly: $doc"
  [ "$(sqlite3 "$BATCHAI_HOME/state.db" 'PRAGMA integrity_check')" = ok ] || fail "the store is damaged"
  create_job after_full "$(custom 1 'echo ran')"
  doc=$(wait_end after_full 60)
  [ "$(jq_ "d['executionState']" <<< "$doc")" = succeeded ] && ok "the next job ran" || fail "the next job: $doc"
}

# A compute host's link taken down mid-job: the job ends failed within 90 s naming the host,
# nothing of it runs on: the other host, the node unusable; the link back: the node returns and
# the next job (on every node) runs on it.
scenario_lost_host() {
  local marker="lost-host-$$" victim doc t0 t1 h
  create_job lost "$(mpi 2 2 "sleep 600 # $marker")" || { fail "job create lost"; return; }
  wait_state lost running 60 || { fail "the job did not start"; return; }
  sleep 3
  victim=$(b job node list -g rg -w ws -e exp -j lost --query "[1].nodeId" -o tsv)
  [ -n "$victim" ] || { fail "no second node of the job"; return; }
  t0=$SECONDS
  "$rig" cut "$base" "$victim"
  doc=$(wait_end lost 120)
  t1=$SECONDS
  echo "  noticed after $((t1 - t0)) s: $(jq_ "d['executionInfo']['errors']" <<< "$doc")"
  [ "$(jq_ "d['executionState']" <<< "$doc")" = failed ] || fail "the job did not end failed: $doc"
  [ $((t1 - t0)) -le 90 ] || fail "the lost host took $((t1 - t0)) s to notice (limit 90)"
  [[ "$(jq_ "d['executionInfo']['errors'][0]['message']" <<< "$doc")" == *"$victim"* ]] || fail "the error does not name $victim"
  sleep 2
  for h in $RIG_HOSTS; do
    [ "$h" = "$victim" ] && continue
    "$rig" exec "$base" "$h" pgrep -f "$marker" >/dev/null && fail "the job still runs on $h"
  done
  local counts
  counts=$(b cluster show -g rg -w ws -n sc --query "nodeStateCounts.unusableNodeCount" -o tsv)
  [ "$counts" -ge 1 ] && ok "the node is shown unusable ($counts)" || fail "no unusable node shown"
  "$rig" mend "$base" "$victim"
  local deadline=$((SECONDS + 90))
  while [ $SECONDS -lt $deadline ]; do
    [ "$(b cluster show -g rg -w ws -n sc --query "nodeStateCounts.idleNodeCount" -o tsv)" = "$nodes" ] && break
    sleep 1
  done
  echo "  back after $((SECONDS - t1)) s"
  create_job every "$(mpi "$nodes" "$nodes" 'echo host=$(hostname)')"
  doc=$(wait_end every 90)
  [ "$(jq_ "d['executionState']" <<< "$doc")" = succeeded ] && stream every stdout.txt | grep -q "host=$victim" &&
    ok "the next job ran on $victim" || fail "the next job did not run on $victim: $doc"
}

# The tutorial's horovod job on 2 hosts x 2 ranks against the same job (seed, data) on a simulated
# 4-node cluster. With the allreduce whose sums follow the ranks only (MPI_Allreduce), the per-epoch
# validation accuracy is the same; the default one groups ranks by host (shared memory inside a
# host, a ring between hosts), which adds the same numbers in another order.
scenario_tutorial() {
  local t="$BATCHAI_HOME/tutorial" where run args
  declare -A accs
  for run in "rig default" "sim default" "rig mpi" "sim mpi"; do
    read -r where args <<< "$run"
    local part=(NODES=4) extra=()
    [ "$where" = rig ] && part=(SLURM_PARTITION=batchai NODES=2 PROCESSES=4)
    [ "$args" = mpi ] && extra=(TRAIN_ARGS="--allreduce mpi")
    local shared="$BATCHAI_SHARED_DIR/$where-$args"
    mkdir -p "$shared"
    env "${part[@]}" "${extra[@]}" HOME="$t-home" BATCHAI="$exe" BATCHAI_HOME="$t-$where-$args" BATCHAI_SHARED_DIR="$shared" \
      STEP_PAUSE=0.5 SYNTHETIC=512 EPOCHS=2 STEPS_PER_EPOCH=6 VALIDATION_IMAGES=128 CLEANUP=0 \
      bash "$root/examples/horovod-cifar10/tutorial.sh" > "$t-$where-$args.log" 2>&1 ||
      { fail "tutorial on $where ($args): $(tail -5 "$t-$where-$args.log")"; continue; }
    accs[$run]=$(grep -o 'val_acc: [0-9.]*' "$t-$where-$args.log" | tr '\n' ' ')
    echo "  $run: ${accs[$run]}"
    if [ "$run" = "rig default" ]; then
      local layout
      layout=$(find "$shared/storage" -name stderr.txt -exec grep -h "allreduce through shared memory" {} + 2>/dev/null)
      echo "  $layout"
      [[ "$layout" == *"4 ranks on 2 host(s)"* ]] || fail "the trainer did not group its 4 ranks by 2 hosts: '$layout'"
      grep -q "^Epoch 2/2" "$t-$where-$args.log" || fail "the rig's tutorial did not train 2 epochs"
    fi
  done
  [ -n "${accs[rig mpi]:-}" ] && [ "${accs[rig mpi]}" = "${accs[sim mpi]:-}" ] &&
    ok "same per-epoch validation accuracy on 2 hosts x 2 ranks and on 4 simulated nodes" ||
    fail "per-epoch validation accuracy differs: '${accs[rig mpi]:-}' vs '${accs[sim mpi]:-}'"
}

# Container jobs on hosts of their own (issue 55; docs/slurm.md): the rig's hosts share the root
# file system, so one Podman store (/var/lib/containers) and runroot (/run) serve them all, while each
# container runs in its host's network, /tmp and /dev/shm. A 2-host job runs in the image on both
# hosts (node 1's container through srun on its host); with MPI_IMAGE_TAR, a 2-rank MPI job across
# the two hosts' containers; the runner SIGKILLed mid-job leaves no container on any host; a host
# whose podman cannot run fails the job naming it. Skips (77) without podman.
scenario_containers() {
  command -v podman > /dev/null || { echo "SKIP: podman is not installed"; exit 77; }
  # shellcheck source=tests/slurm/slurm_common.sh
  . "$here/../slurm_common.sh"
  local image="localhost/batchai-rig-test-$$:1" mpi_image="localhost/batchai-rig-mpi-$$:1" doc out key known runner
  images+=("$image" "$mpi_image")
  build_test_image "$BATCHAI_HOME/image" "$image" || { fail "cannot build the image"; return; }
  in_image() { python3 -c 'import json,sys; p=json.loads(sys.argv[2]); p["containerSettings"]={"imageSourceRegistry":{"image":sys.argv[1]}}; print(json.dumps(p))' "$@"; }
  local props
  props=$(in_image "$image" "$(custom 2 'cat /etc/batchai-test-image; hostname')")
  props=$(python3 -c 'import json,sys; p=json.loads(sys.argv[1]); p["jobPreparation"]={"commandLine":sys.argv[2]}; print(json.dumps(p))' \
    "$props" 'echo "$(cat /etc/batchai-test-image) $(hostname) $(ip -4 -o addr | grep -o "10[.][0-9.]*" | head -1)"')
  create_job cont "$props" || { fail "job create cont"; return; }
  doc=$(wait_end cont 120)
  [ "$(jq_ "d['executionState']" <<< "$doc")" = succeeded ] || fail "the container job did not succeed: $doc $(stream cont stderr.txt)"
  out=$(stream cont stdout.txt)
  [ "$out" = "$(printf 'batchai-slurm-image\nbatchai-node-0')" ] && ok "the command ran in node 0's container" || fail "the command: '$out'"
  local f addrs=""
  for f in $(find "$BATCHAI_SHARED_DIR" -path '*/jobs/cont/*' -name 'stdout-job_prep-*.txt'); do
    out=$(cat "$f")
    echo "  $(basename "$f"): $out"
    [[ "$out" == "batchai-slurm-image batchai-node-"[01]" 10."* ]] || fail "$f: the preparation did not run in the image: '$out'"
    addrs+="${out##* } "
  done
  [ "$(wc -w <<< "$addrs")" = 2 ] && [ "$(tr ' ' '\n' <<< "$addrs" | sort -u | grep -c .)" = 2 ] &&
    ok "the containers ran on 2 hosts' networks: $addrs" || fail "not 2 hosts' addresses: '$addrs'"
  for n in $addrs; do [[ " $RIG_ADDRS " == *" $n "* ]] || fail "address $n is not one of the rig's ($RIG_ADDRS)"; done

  if [ -f "${MPI_IMAGE_TAR:-}" ] && podman import -q "$MPI_IMAGE_TAR" "$mpi_image" > /dev/null; then
    create_job contmpi "$(in_image "$mpi_image" "$(mpi 2 2 'echo "rank $OMPI_COMM_WORLD_RANK in $(hostname)"')")" ||
      fail "job create contmpi"
    doc=$(wait_end contmpi 120)
    out=$(stream contmpi stdout.txt)
    echo "$out" | sed 's/^/  /'
    [ "$(jq_ "d['executionState']" <<< "$doc")" = succeeded ] && grep -qx "rank 0 in batchai-node-0" <<< "$out" &&
      grep -qx "rank 1 in batchai-node-1" <<< "$out" && ok "2 MPI ranks in the two hosts' containers" ||
      fail "the MPI container job: $doc $(stream contmpi stderr.txt)"
  else
    echo "  no MPI image (MPI_IMAGE_TAR ${MPI_IMAGE_TAR:-unset}): the MPI job is left out"
  fi

  # The runner SIGKILLed mid-job: the batch script's shell removes the containers on both hosts.
  known=$(ls "$BATCHAI_SHARED_DIR/jobs")
  create_job contkill "$(in_image "$image" "$(custom 2 'echo started; sleep 300')")" || fail "job create contkill"
  key="" runner=""
  for _ in $(seq 1 600); do
    [ -n "$key" ] || key=$(ls "$BATCHAI_SHARED_DIR/jobs" | grep -vxF "${known:-none}" | head -1)
    [ -n "$key" ] && runner=$(pgrep -f -- "batchai _slurm-run --job-key $key" | head -1)
    [ -n "$runner" ] &&
      [ "$(find "$BATCHAI_SHARED_DIR" -path '*/jobs/contkill/*' -name stdout.txt -exec cat {} + 2>/dev/null)" = started ] &&
      [ "$(podman ps --format '{{.Names}}' | grep -c "^batchai-$key-")" = 2 ] && break
    runner=""
    sleep 0.1
  done
  if [ -n "$runner" ]; then
    kill -KILL "$runner"
    doc=$(wait_end contkill 120)
    [ "$(jq_ "d['executionInfo']['errors'][0]['code']" <<< "$doc")" = JobRunLost ] || fail "not JobRunLost: $doc"
    left() { podman ps -a --format '{{.Names}}' | grep -c "^batchai-$key-"; }
    for _ in $(seq 1 100); do [ "$(left)" = 0 ] && break; sleep 0.2; done
    [ "$(left)" = 0 ] && ok "the killed runner's containers are gone from both hosts" ||
      fail "the killed runner's containers are left: $(podman ps -a --format '{{.Names}}' | grep "$key")"
  else
    fail "the job to kill did not start in 2 containers (key ${key:-none})"
  fi

  # Podman that cannot run on every host but h1 (an empty file over it in those hosts' own mount
  # namespaces): the job fails naming such a host and saying what to install.
  local podman_bin h hidden=()
  podman_bin=$(command -v podman)
  for h in $RIG_HOSTS; do
    [ "$h" = h1 ] && continue
    "$rig" exec "$base" "$h" mount --bind /dev/null "$podman_bin" && hidden+=("$h")
  done
  create_job nopodman "$(in_image "$image" "$(custom 2 'echo ran')")" || fail "job create nopodman"
  doc=$(wait_end nopodman 120)
  for h in "${hidden[@]}"; do "$rig" exec "$base" "$h" umount "$podman_bin"; done
  out=$(jq_ "d['executionInfo']['errors'][0]['code'] + ': ' + d['executionInfo']['errors'][0]['message']" <<< "$doc")
  echo "  $out"
  [[ "$out" == "ContainerRuntimeMissing: "*"node h"[2-9]*"install the podman package"* ]] &&
    ok "a host without podman fails the job naming it" || fail "a host without podman: $doc"
}

images=()
for s in "$@"; do
  echo "=== $s"
  "scenario_${s//-/_}"
done
[ "$failures" = 0 ] && echo "all multihost checks passed" || echo "$failures multihost check(s) failed"
[ "$failures" = 0 ]
