#!/usr/bin/env bash
# Issue 52, "Measured on the rig": jobs through batchai on a Slurm of hosts, beside raw sbatch.
#   multihost_jobs_bench.sh BATCHAI_EXE RIG_BASE [REPS]
# (a) a 2-host trivial job, `job create` -> running, beside `sbatch -N2 --exclusive --wrap true`
#     -> R, alternating which goes first, REPS times (default 6); polled every 50 ms;
# (b) 100 trivial jobs from 10 shells: every job ends succeeded, each ran once (a ledger on the
#     shared folder), none lost.
# Starts the rig in RIG_BASE (tests/slurm/multihost/rig.sh, 3 hosts; RIG_BASE must not be under
# /tmp) and stops it at the end, also on failure. Exits non-zero when a check fails.
set -u
exe=${1:?usage: $0 BATCHAI_EXE RIG_BASE [REPS]}
base=${2:?usage: $0 BATCHAI_EXE RIG_BASE [REPS]}
reps=${3:-6}
[[ "$reps" =~ ^[1-9][0-9]?$ ]] || { echo "REPS must be 1..99" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
rig="$here/../../slurm/multihost/rig.sh"
"$rig" start "$base" 3 > /dev/null || exit 1
trap '"$rig" stop "$base" > /dev/null 2>&1' EXIT
# shellcheck disable=SC1091
. "$base/rig.env"
export SLURM_CONF BATCHAI_SIM_DELAY_S=0
export BATCHAI_HOME="$RIG_LOGIN/bench-home" BATCHAI_SHARED_DIR="$RIG_SHARED/bench"
mkdir -p "$BATCHAI_HOME" "$BATCHAI_SHARED_DIR" && chmod 700 "$BATCHAI_HOME"
b() { "$exe" "$@"; }
now() { date +%s.%N; }
b group create -n rg -l eastus -o none && b workspace create -g rg -n ws -l eastus -o none &&
  b experiment create -g rg -w ws -n exp -o none &&
  b cluster create -g rg -w ws -n sc -s Standard_D1 -t 3 --slurm-partition batchai -o none || exit 1
printf '{"properties": {"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out", "customToolkitSettings": {"commandLine": "true"}}}' > "$BATCHAI_HOME/true.json"
idle() { while [ -n "$(squeue -h -o %i)" ]; do sleep 0.05; done; }

batchai_to_running() {  # prints seconds from job create to running
  local name=$1 t0 s
  t0=$(now)
  b job create -g rg -w ws -e exp -c sc -n "$name" --config-file "$BATCHAI_HOME/true.json" -o none
  while :; do
    s=$(b job show -g rg -w ws -e exp -n "$name" --query executionState -o tsv)
    [ "$s" = running ] || [ "$s" = succeeded ] || [ "$s" = failed ] && break
    sleep 0.05
  done
  awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
}
raw_to_running() {
  local t0 id s
  t0=$(now)
  id=$(cd "$RIG_SHARED" && sbatch --parsable -N2 --exclusive -p batchai --wrap true)
  while :; do
    s=$(squeue -h -j "$id" -o %t 2>/dev/null)
    [ "$s" = R ] || [ "$s" = CG ] || [ -z "$s" ] && break
    sleep 0.05
  done
  awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
}

echo "== (a) create -> running, 2 hosts, $reps repetitions (alternating order)"
bt=() rt=()
for i in $(seq 1 "$reps"); do
  idle
  if [ $((i % 2)) = 1 ]; then bt+=("$(batchai_to_running "lat$i")"); idle; rt+=("$(raw_to_running)")
  else rt+=("$(raw_to_running)"); idle; bt+=("$(batchai_to_running "lat$i")"); fi
  b job wait -g rg -w ws -e exp -n "lat$i" > /dev/null 2>&1
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "batchai: ${bt[*]}"
echo "raw:     ${rt[*]}"
echo "median batchai $(median "${bt[@]}") s, raw $(median "${rt[@]}") s"

echo "== (b) 100 trivial jobs from 10 shells"
ledger="$BATCHAI_SHARED_DIR/ledger"
: > "$ledger"
printf '{"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out", "customToolkitSettings": {"commandLine": "echo $AZ_BATCHAI_STDOUTERR_DIR >> %s"}}}' "$ledger" > "$BATCHAI_HOME/ledger.json"
t0=$(now)
for s in $(seq 1 10); do
  (for j in $(seq 1 10); do
    b job create -g rg -w ws -e exp -c sc -n "burst-$s-$j" --config-file "$BATCHAI_HOME/ledger.json" -o none
  done) &
done
wait
deadline=$((SECONDS + 600))
while [ $SECONDS -lt $deadline ]; do
  left=$(b job list -g rg -w ws -e exp --query "length([?starts_with(name, 'burst') && executionState != 'succeeded' && executionState != 'failed'])" -o tsv)
  [ "$left" = 0 ] && break
  sleep 1
done
echo "all ended after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
listed=$(b job list -g rg -w ws -e exp --query "length([?starts_with(name, 'burst')])" -o tsv)
succeeded=$(b job list -g rg -w ws -e exp --query "length([?starts_with(name, 'burst') && executionState == 'succeeded'])" -o tsv)
runs=$(wc -l < "$ledger")
twice=$(sort "$ledger" | uniq -d | wc -l)
echo "listed $listed, succeeded $succeeded, ledger lines $runs, jobs run twice $twice"
b group delete -n rg -y > /dev/null 2>&1
[ "$listed" = 100 ] && [ "$succeeded" = 100 ] && [ "$runs" = 100 ] && [ "$twice" = 0 ]
