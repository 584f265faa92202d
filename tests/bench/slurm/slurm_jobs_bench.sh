#!/bin/bash
# Issue 15, "Measure and report": jobs through Slurm beside the same jobs on simulated clusters.
#   slurm_jobs_bench.sh BATCHAI_EXE [--quick]    (BENCH_REPS=N: N latency repetitions per backend)
# (a) latency of a 2-node trivial job, create -> running and create -> succeeded, per backend;
# (b) 100 trivial jobs through Slurm from 10 shells (--quick: 20 from 4): all listed, all
#     succeeded, one distinct Slurm id each, one jobcomp record per id (none lost, none run twice);
# (c) without --quick: the tutorial's trainer on 2 nodes, a short schedule, Slurm then simulated.
# Starts its own private Slurm (tests/slurm/private_slurm.sh, PORT_BASE from the environment,
# default 18600) and temporary BATCHAI_HOMEs; stops and removes them at the end, also on failure.
# Exits non-zero if any check fails.
set -eu

usage() { echo "usage: $0 BATCHAI_EXE [--quick]" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
EXE=$1
QUICK=0
if [ $# -eq 2 ]; then [ "$2" = "--quick" ] || usage; QUICK=1; fi
case "$EXE" in /*) ;; *) EXE=$PWD/$EXE ;; esac
[ -x "$EXE" ] || { echo "not an executable: $EXE" >&2; exit 2; }

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PRIVATE_SLURM=$REPO/tests/slurm/private_slurm.sh
export PORT_BASE=${PORT_BASE:-18600}
[[ "$PORT_BASE" =~ ^[1-9][0-9]{3,4}$ ]] || { echo "PORT_BASE must be a port number, not '$PORT_BASE'" >&2; exit 2; }
export BATCHAI_SIM_DELAY_S=0

if [ "$QUICK" = 1 ]; then REPS=2; SHELLS=4; PER_SHELL=5; else REPS=5; SHELLS=10; PER_SHELL=10; fi
REPS=${BENCH_REPS:-$REPS}  # more repetitions of (a) when asked
[[ "$REPS" =~ ^[1-9][0-9]?$ ]] || { echo "BENCH_REPS must be 1 to 99, not '$REPS'" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/slurm-jobs-bench.XXXXXX")
chmod 755 "$WORK"   # slurmd and munged (other users when run as root) read below it
SLURM_BASE=$WORK/slurm
# shellcheck disable=SC2317  # reached through the trap
cleanup() {
  bash "$PRIVATE_SLURM" stop "$SLURM_BASE" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FAILED=0
check() {  # check DESCRIPTION CONDITION-RESULT(0/1)
  if [ "$2" = 0 ]; then echo "  ok    $1"; else echo "  FAIL  $1"; FAILED=1; fi
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }
# median and max of numbers on stdin, "median X max Y"
stats() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                             printf "median %6.3f s  max %6.3f s", m, v[NR] }'; }

echo "== private Slurm (3 nodes, PORT_BASE=$PORT_BASE)"
bash "$PRIVATE_SLURM" start "$SLURM_BASE" 3 | tail -n 1
export SLURM_CONF=$SLURM_BASE/etc/slurm.conf
JOBCOMP=$(sed -n 's/^JobCompLoc=//p' "$SLURM_CONF")

# One BATCHAI_HOME per backend: a group, workspace, experiment and cluster "c".
# setup_home HOME TARGET slurm|sim
setup_home() {
  local home=$1 target=$2 kind=$3 extra=()
  [ "$kind" = slurm ] && extra=(--slurm-partition batchai)
  mkdir -p "$home"
  BATCHAI_HOME=$home "$EXE" group create -n rg -l eastus -o none
  BATCHAI_HOME=$home "$EXE" workspace create -g rg -n ws -l eastus -o none
  BATCHAI_HOME=$home "$EXE" experiment create -g rg -w ws -n exp -o none
  BATCHAI_HOME=$home "$EXE" cluster create -g rg -w ws -n c -s Standard_D3 -t "$target" -u alice -p secret \
    "${extra[@]}" -o none
}
# bai HOME ARGS...: batchai against one home
bai() { local home=$1; shift; BATCHAI_HOME=$home "$EXE" "$@"; }
state_of() { bai "$1" job show -g rg -w ws -e exp -n "$2" --query executionState -o tsv 2>/dev/null || echo "?"; }
# job file: write_job FILE NODES COMMAND
write_job() {
  cat > "$1" <<EOF
{"properties": {"nodeCount": $2, "customToolkitSettings": {"commandLine": "$3"},
                "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}}
EOF
}
create_job() {  # create_job HOME NAME FILE
  bai "$1" job create -g rg -w ws -e exp -n "$2" -c c -f "$3" -o none
}
# Waits (bounded) until the job is finished; prints its final state.
wait_finished() {
  local home=$1 name=$2 limit=${3:-300} s start=$SECONDS
  while :; do
    s=$(state_of "$home" "$name")
    case "$s" in succeeded|failed) echo "$s"; return 0 ;; esac
    [ $((SECONDS - start)) -lt "$limit" ] || { echo "timeout($s)"; return 0; }
    sleep 0.2
  done
}

SLURM_HOME=$WORK/home-slurm
SIM_HOME=$WORK/home-sim

# ---------------------------------------------------------------------------------------------
echo
echo "== (a) latency of a 2-node trivial job (custom 'true'), $REPS repetitions per backend"
setup_home "$SLURM_HOME" 2 slurm
setup_home "$SIM_HOME" 2 sim
write_job "$WORK/true.json" 2 true
: > "$WORK/a-slurm-run"; : > "$WORK/a-slurm-done"; : > "$WORK/a-sim-run"; : > "$WORK/a-sim-done"
# slurm_wait ID: seconds from slurmctld accepting batch job ID to allocating its nodes, from its log
# (millisecond stamps): the scheduler's own wait, the same whoever submits. "to running" less this
# is what the submitter and the poll add, which the scheduler's 0.5-3 s passes would otherwise hide.
slurm_wait() {
  awk -v id="$1" '
    function t(s, a) { split(substr(s, 2, 23), a, /[-T:]/); return a[4] * 3600 + a[5] * 60 + a[6] }
    index($0, "_slurm_rpc_submit_batch_job: JobId=" id " ") { s = t($1) }
    !a && (index($0, "sched: Allocate JobId=" id " ") || index($0, "backfill: Started JobId=" id " ")) { a = t($1) }
    END { if (s && a) printf "%.3f\n", a - s }' "$SLURM_BASE/log/slurmctld.log"
}
# The Slurm job id batchai submitted job NAME as (its store: SQLite through Python's module).
slurm_id_of() {
  python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT engine_job_id FROM jobs WHERE name = ?", (sys.argv[2],)).fetchone()
print(r[0] if r and r[0] is not None else "")' "$1/state.db" "$2"
}
# own KIND ID RUN: records RUN less Slurm's wait for job ID as KIND's own share
own() {
  local wait
  wait=$(slurm_wait "$2")
  [ -n "$wait" ] && secs "$wait" "$3" >> "$WORK/a-$1-own"
  return 0
}
# measure KIND HOME NAME: time from `job create` returning to running and to succeeded (50 ms polls)
measure() {
  local kind=$1 home=$2 name=$3 t0 t s run="" limit=$((SECONDS + 120))
  create_job "$home" "$name" "$WORK/true.json"
  t0=$(now)
  while :; do
    s=$(state_of "$home" "$name")
    t=$(now)
    # a job that passes running between two polls is counted running when first seen finished
    if [ -z "$run" ] && { [ "$s" = running ] || [ "$s" = succeeded ] || [ "$s" = failed ]; }; then run=$(secs "$t0" "$t"); fi
    case "$s" in succeeded|failed) break ;; esac
    [ "$SECONDS" -lt "$limit" ] || { s="timeout($s)"; break; }
    sleep 0.05
  done
  check "$kind $name: $s (running after ${run:-?} s, finished after $(secs "$t0" "$t") s)" "$([ "$s" = succeeded ] && echo 0 || echo 1)"
  [ "$s" = succeeded ] || return 0
  echo "$run" >> "$WORK/a-$kind-run"
  secs "$t0" "$t" >> "$WORK/a-$kind-done"
  if [ "$kind" = slurm ]; then own slurm "$(slurm_id_of "$home" "$name")" "$run"; fi
}
# The anchor: the same 2-node job straight through sbatch (no batchai), polled with squeue at the
# same 50 ms, so what batchai adds over Slurm's own scheduling shows.
measure_raw() {
  local id t0 t s run="" limit=$((SECONDS + 120))
  id=$(sbatch --parsable -p batchai -N 2 --exclusive -o /dev/null --wrap true) || { check "raw sbatch" 1; return 0; }
  t0=$(now)
  while :; do
    s=$(squeue -h -t all -j "$id" -o %T 2>/dev/null)
    t=$(now)
    if [ -z "$run" ] && [ -n "$s" ] && [ "$s" != PENDING ] && [ "$s" != CONFIGURING ]; then run=$(secs "$t0" "$t"); fi
    case "$s" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|"") break ;; esac
    [ "$SECONDS" -lt "$limit" ] || { s="timeout($s)"; break; }
    sleep 0.05
  done
  check "raw sbatch $id: ${s:-gone} (running after ${run:-?} s, finished after $(secs "$t0" "$t") s)" \
    "$([ "$s" = COMPLETED ] && echo 0 || echo 1)"
  [ "$s" = COMPLETED ] || return 0
  echo "$run" >> "$WORK/a-raw-run"
  secs "$t0" "$t" >> "$WORK/a-raw-done"
  own raw "$id" "$run"
}
: > "$WORK/a-raw-run"; : > "$WORK/a-raw-done"; : > "$WORK/a-slurm-own"; : > "$WORK/a-raw-own"
# Both Slurm jobs start from an idle partition: a job submitted while the last one's nodes are
# still completing waits for the scheduler's next pass, and whichever came second would pay it.
wait_idle_partition() {
  local limit=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$limit" ]; do
    [ -z "$(sinfo -h -N -p batchai -o %T | grep -v '^idle$')" ] && return 0
    sleep 0.05
  done
}
# Which goes first alternates: each Slurm job's wait depends on the phase of the scheduler's passes
# (the one before it ending sets one off), and a fixed order would give one of them the better phase.
for r in $(seq 1 "$REPS"); do
  wait_idle_partition
  if [ $((r % 2)) = 1 ]; then measure slurm "$SLURM_HOME" "lat$r"; else measure_raw; fi
  measure sim "$SIM_HOME" "lat$r"
  wait_idle_partition
  if [ $((r % 2)) = 1 ]; then measure_raw; else measure slurm "$SLURM_HOME" "lat$r"; fi
done
for kind in slurm raw sim; do
  if [ -s "$WORK/a-$kind-run" ]; then
    printf '  %-5s to running:   %s\n' "$kind" "$(stats < "$WORK/a-$kind-run")"
    printf '  %-5s to succeeded: %s\n' "$kind" "$(stats < "$WORK/a-$kind-done")"
  fi
  if [ -s "$WORK/a-$kind-own" ]; then
    printf '  %-5s to running less Slurm'"'"'s own wait (submit -> allocate in slurmctld.log): %s\n' "$kind" \
      "$(stats < "$WORK/a-$kind-own")"
  fi
done

# ---------------------------------------------------------------------------------------------
TOTAL=$((SHELLS * PER_SHELL))
echo
echo "== (b) $TOTAL trivial jobs through Slurm from $SHELLS shells in parallel (cluster target 3, 1 node each)"
MANY_HOME=$WORK/home-many
setup_home "$MANY_HOME" 3 slurm
# shellcheck disable=SC2016  # the job's shell expands it
write_job "$WORK/echo.json" 1 'echo $SLURM_JOB_ID'
jobs_before=$(grep -c . "$JOBCOMP" 2>/dev/null || true)
T0=$(now)
pids=()
for sh in $(seq 1 "$SHELLS"); do
  (
    for j in $(seq 1 "$PER_SHELL"); do
      create_job "$MANY_HOME" "m$sh-$j" "$WORK/echo.json" 2> "$WORK/create-m$sh-$j.err" || echo "m$sh-$j" >> "$WORK/create-failed"
    done
  ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
T_CREATED=$(now)
created_failed=$( [ -f "$WORK/create-failed" ] && wc -l < "$WORK/create-failed" || echo 0)
check "all $TOTAL job create calls succeeded ($created_failed failed; $(secs "$T0" "$T_CREATED") s to create)" \
  "$([ "$created_failed" = 0 ] && echo 0 || echo 1)"
# wait until every job is finished (bounded: 10 minutes)
deadline=$((SECONDS + 600))
while :; do
  unfinished=$(bai "$MANY_HOME" job list -g rg -w ws -e exp \
    --query "length([?executionState!='succeeded' && executionState!='failed'])" -o tsv)
  [ "$unfinished" = 0 ] && break
  [ "$SECONDS" -lt "$deadline" ] || break
  sleep 0.5
done
T_DONE=$(now)
listed=$(bai "$MANY_HOME" job list -g rg -w ws -e exp --query "length(@)" -o tsv)
succeeded=$(bai "$MANY_HOME" job list -g rg -w ws -e exp --query "length([?executionState=='succeeded'])" -o tsv)
check "all $TOTAL jobs listed by job list ($listed)" "$([ "$listed" = "$TOTAL" ] && echo 0 || echo 1)"
check "all $TOTAL jobs succeeded ($succeeded)" "$([ "$succeeded" = "$TOTAL" ] && echo 0 || echo 1)"
: > "$WORK/ids"
bad_out=0
for sh in $(seq 1 "$SHELLS"); do
  for j in $(seq 1 "$PER_SHELL"); do
    out=$(bai "$MANY_HOME" job file stream -g rg -w ws -e exp -j "m$sh-$j" -f stdout.txt 2>/dev/null || true)
    if [[ "$out" =~ ^[1-9][0-9]*$ ]]; then echo "$out" >> "$WORK/ids"; else bad_out=$((bad_out + 1)); fi
  done
done
check "each job's stdout holds one Slurm job id ($bad_out without)" "$([ "$bad_out" = 0 ] && echo 0 || echo 1)"
distinct=$(sort -u "$WORK/ids" | wc -l)
check "the $TOTAL Slurm job ids are distinct ($distinct distinct)" "$([ "$distinct" = "$TOTAL" ] && echo 0 || echo 1)"
# jobcomp/filetxt writes one line per finished job: "JobId=N UserId=... JobState=..."
records_bad=0
while read -r id; do
  n=$(grep -c "^JobId=$id " "$JOBCOMP" || true)
  [ "$n" = 1 ] || { records_bad=$((records_bad + 1)); echo "    job $id: $n jobcomp records"; }
done < <(sort -u "$WORK/ids")
check "one jobcomp record per id, none run twice or lost ($records_bad ids otherwise)" \
  "$([ "$records_bad" = 0 ] && echo 0 || echo 1)"
jobs_after=$(grep -c . "$JOBCOMP" 2>/dev/null || true)
check "jobcomp gained exactly $TOTAL records ($((jobs_after - jobs_before)))" \
  "$([ $((jobs_after - jobs_before)) = "$TOTAL" ] && echo 0 || echo 1)"
echo "  wall time: $(secs "$T0" "$T_DONE") s from the first create to all finished"

# ---------------------------------------------------------------------------------------------
if [ "$QUICK" = 0 ]; then
  echo
  echo "== (c) the tutorial's trainer (horovodSettings batchai-train), 2 nodes, short schedule"
  DATA_SRC=$REPO/../shared/data/cifar10-jpeg75
  SCHEDULE="--epochs 2 --steps-per-epoch 40 --validation-images 1000 --backend cpu --threads 1"
  if [ -d "$DATA_SRC" ]; then
    # the trainer reads the binary batches (data_batch_1..5.bin, test_batch.bin): unpack them once
    DATA=$WORK/cifar10-jpeg75
    mkdir -p "$DATA"
    for f in "$DATA_SRC"/*.bin.xz; do xz -dc "$f" > "$DATA/$(basename "$f" .xz)"; done
    chmod -R a+rX "$DATA"
    DATA_ARGS="--data-dir $DATA"
    echo "  data: cifar10-jpeg75 (CIFAR-10 with pixels from a JPEG quality-75 copy; slightly off the official files)"
  else
    DATA_ARGS="--synthetic 2048"
    echo "  data: synthetic (2048 images; cifar10-jpeg75 not found)"
  fi
  echo "  schedule: $SCHEDULE"
  cat > "$WORK/train.json" <<EOF
{"properties": {"nodeCount": 2,
  "horovodSettings": {"pythonScriptFilePath": "batchai-train",
    "commandLineArgs": "$SCHEDULE $DATA_ARGS --dir \$AZ_BATCHAI_OUTPUT_MODEL"},
  "outputDirectories": [{"id": "MODEL", "pathPrefix": "\$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}],
  "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_MOUNT_ROOT/out"}}
EOF
  for kind in slurm sim; do
    home=$SLURM_HOME; [ "$kind" = sim ] && home=$SIM_HOME
    t0=$(now)
    create_job "$home" train "$WORK/train.json"
    s=$(wait_finished "$home" train 300)
    t=$(now)
    out=$(bai "$home" job file stream -g rg -w ws -e exp -j train -f stdout.txt 2>/dev/null || true)
    epochs=$(grep -c '^Epoch [0-9]*/' <<< "$out" || true)
    val=$(grep -o 'val_acc: [0-9.]*' <<< "$out" | tail -n 1 | cut -d' ' -f2)
    check "$kind trainer: $s, epochs $epochs, final val_acc ${val:-?}, wall $(secs "$t0" "$t") s" \
      "$([ "$s" = succeeded ] && [ "$epochs" = 2 ] && [ -n "$val" ] && echo 0 || echo 1)"
    if [ "$s" != succeeded ]; then
      bai "$home" job file stream -g rg -w ws -e exp -j train -f stderr.txt 2>/dev/null | tail -n 5 | sed 's/^/    /' || true
    fi
  done
fi

echo
if [ "$FAILED" = 0 ]; then echo "RESULT: all checks passed"; else echo "RESULT: some checks FAILED"; fi
exit "$FAILED"
