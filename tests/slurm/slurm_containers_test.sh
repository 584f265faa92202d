#!/usr/bin/env bash
# A job in a container image on 2 nodes of a Slurm partition (docs/job-runtime.md §4.14, docs/slurm.md):
# its own private Slurm (private_slurm.sh, 3 nodes on this host, PORT_BASE from ctest's
# environment), a tiny image built offline (busybox, bash; podman import). The preparation runs in
# the image on both nodes (the second node's container started and entered through srun), the
# command on the first; afterwards no container of the job is left. A job whose runner is
# SIGKILLed mid-job ends JobRunLost with no container left; one whose whole batch step is SIGKILLed
# ends failed, and a cleanup job the login host submits removes its containers. Skips (77) without podman.
# With MPI_IMAGE_TAR (the Debian image with Open MPI that tests/jobs builds), also a 2-rank MPI job
# whose second rank's Open MPI daemon enters node 1's container through srun.
# Usage: slurm_containers_test.sh BATCHAI_EXECUTABLE SLURM_BASE [MPI_IMAGE_TAR]
set -uo pipefail
exe="${1:?usage: slurm_containers_test.sh BATCHAI_EXECUTABLE SLURM_BASE}"
base="${2:?usage: slurm_containers_test.sh BATCHAI_EXECUTABLE SLURM_BASE}"
here="$(cd "$(dirname "$0")" && pwd)"
command -v podman > /dev/null || { echo "SKIP: podman is not installed (cmake/install-deps.sh)"; exit 77; }
tmp="$(mktemp -d -t batchai-slurm-containers.XXXXXX)"
chmod 755 "$tmp"
image="localhost/batchai-slurm-test-$$:1"
mpi_tar="${3:-}" mpi_image="localhost/batchai-slurm-mpi-$$:1"
cleanup() {
  bash "$here/private_slurm.sh" stop "$base" > /dev/null 2>&1 || true
  podman rmi -f "$image" "$mpi_image" > /dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

. "$here/slurm_common.sh"
build_test_image "$tmp/image" "$image" || { echo "FAIL: cannot build the image"; exit 1; }

bash "$here/private_slurm.sh" start "$base" 3 || { echo "FAIL: the private Slurm did not start"; exit 1; }
export SLURM_CONF="$base/etc/slurm.conf" BATCHAI_HOME="$tmp/state" HOME="$tmp/home"
mkdir -p "$HOME"
b() { "$exe" "$@"; }
b group create -n rg -l eastus -o none && b workspace create -g rg -n ws -l eastus -o none &&
  b experiment create -g rg -w ws -n e -o none &&
  b cluster create -g rg -w ws -n c -s Standard_D3 -t 2 -u u -p Secret.123 --slurm-partition batchai -o none ||
  { echo "FAIL: cannot create the Slurm cluster"; exit 1; }
cat > "$tmp/job.json" <<JSON
{"properties": {"nodeCount": 2, "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_TEMP",
  "jobPreparation": {"commandLine": "cat /etc/batchai-test-image > \$AZ_BATCHAI_JOB_TEMP/prep-\$(hostname).txt"},
  "customToolkitSettings": {"commandLine": "cat /etc/batchai-test-image; hostname"},
  "containerSettings": {"imageSourceRegistry": {"image": "$image"}}}}
JSON
b job create -g rg -w ws -e e -n j -c c -f "$tmp/job.json" -o none || fail "job create refused the container job"
timeout 180 "$exe" job wait -g rg -w ws -e e -n j || fail "the job did not succeed"
b job show -g rg -w ws -e e -n j -o json > "$tmp/job.out"
grep -q '"executionState": "succeeded"' "$tmp/job.out" || { fail "job state"; cat "$tmp/job.out"; }
out=$(find "$BATCHAI_HOME" "$tmp" -path '*stdouterr*' -name stdout.txt 2>/dev/null | head -1)
grep -qx batchai-slurm-image "$out" 2>/dev/null || fail "the command did not run in the image: $(cat "$out" 2>/dev/null)"
grep -qx batchai-node-0 "$out" 2>/dev/null || fail "the command did not run in node 0's container"
preps=$(find "$BATCHAI_HOME" -name 'prep-batchai-node-*.txt' -exec cat {} + 2>/dev/null | grep -c batchai-slurm-image)
[ "$preps" = 2 ] || fail "the preparation ran in the image on $preps node(s), not 2: $(find "$BATCHAI_HOME" -name 'prep-*')"
cat "$out"; cat "$(dirname "$out")/execution.log"

# The runner SIGKILLed mid-job (no handler of its own runs): the batch script's shell, which
# outlives it, removes the job's containers on every node of the allocation; the job ends
# JobRunLost and no container of it is left.
cat > "$tmp/kill.json" <<JSON
{"properties": {"nodeCount": 2, "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_TEMP",
  "customToolkitSettings": {"commandLine": "echo started; sleep 300"},
  "containerSettings": {"imageSourceRegistry": {"image": "$image"}}}}
JSON
# Creates job $1 from kill.json and waits until its command runs in its 2 containers: sets key and runner.
start_job_to_kill() {
  local known
  known=$(ls "$BATCHAI_HOME/jobs")
  b job create -g rg -w ws -e e -n "$1" -c c -f "$tmp/kill.json" -o none || fail "job create refused the job to kill"
  key="" runner="" started=""
  for _ in $(seq 1 600); do
    [ -n "$key" ] || key=$(ls "$BATCHAI_HOME/jobs" | grep -vxF "${known:-none}" | head -1)
    if [ -n "$key" ]; then
      runner=$(pgrep -f -- "batchai _slurm-run --job-key $key" | head -1)
      started=$(find "$BATCHAI_HOME" -path "*/jobs/$1/*" -name stdout.txt -exec cat {} + 2>/dev/null)
      [ -n "$runner" ] && [ "$started" = started ] &&
        [ "$(podman ps --format '{{.Names}}' | grep -c "^batchai-$key-")" = 2 ] && break
    fi
    sleep 0.1
  done
  [ -n "$runner" ] && [ "$started" = started ]
}
left() { podman ps -a --format '{{.Names}}' | grep -c "^batchai-$key-"; }
if start_job_to_kill k; then
  kill -KILL "$runner"
  timeout 120 "$exe" job wait -g rg -w ws -e e -n k > /dev/null 2>&1 && fail "the job whose runner was killed succeeded"
  b job show -g rg -w ws -e e -n k -o json > "$tmp/k.out"
  grep -q JobRunLost "$tmp/k.out" || { fail "the killed runner's job did not end JobRunLost"; cat "$tmp/k.out"; }
  for _ in $(seq 1 100); do [ "$(left)" = 0 ] && break; sleep 0.2; done
  [ "$(left)" = 0 ] || fail "the killed runner's containers are left: $(podman ps -a --format '{{.Names}}' | grep "$key")"
else
  fail "the job to kill did not start its command in 2 containers (key ${key:-none}, runner ${runner:-none})"
fi

# The whole batch step SIGKILLed: the batch script's process group (its shell and the runner, as
# Slurm's proctrack/pgid kills a step) dies at once, so nothing in the allocation removes the
# containers. The job ends failed, and the login host's reconcile removes them through a cleanup
# job on the job's nodes (its first look 20 s after the end), within 90 s. (scancel -s KILL --full
# is no such test here: the runner got to remove them itself.)
if start_job_to_kill s; then
  pgid=$(ps -o pgid= -p "$runner" | tr -d ' ')
  [ -n "$pgid" ] && [ "$pgid" != "$(ps -o pgid= -p $$ | tr -d " ")" ] && kill -KILL -- "-$pgid"
  timeout 120 "$exe" job wait -g rg -w ws -e e -n s > /dev/null 2>&1
  b job show -g rg -w ws -e e -n s -o json > "$tmp/s.out"
  grep -q '"executionState": "failed"' "$tmp/s.out" || { fail "the killed batch step's job did not fail"; cat "$tmp/s.out"; }
  for _ in $(seq 1 90); do
    [ "$(left)" = 0 ] && break
    b cluster show -g rg -w ws -n c -o none > /dev/null 2>&1  # a reconcile of its cluster does the cleanup
    sleep 1
  done
  [ "$(left)" = 0 ] || fail "the killed batch step's containers are left after 90 s: $(podman ps -a --format '{{.Names}}' | grep "$key")"
else
  fail "the job whose batch step to kill did not start its command in 2 containers (key ${key:-none})"
fi
if [ -n "$mpi_tar" ] && [ -f "$mpi_tar" ] && podman import -q "$mpi_tar" "$mpi_image" > /dev/null; then
  cat > "$tmp/mpi.json" <<JSON
{"properties": {"nodeCount": 2, "stdOutErrPathPrefix": "\$AZ_BATCHAI_JOB_TEMP",
  "customMpiSettings": {"commandLine": "echo rank \$OMPI_COMM_WORLD_RANK in \$(hostname)", "processCount": 2},
  "containerSettings": {"imageSourceRegistry": {"image": "$mpi_image"}}}}
JSON
  b job create -g rg -w ws -e e -n m -c c -f "$tmp/mpi.json" -o none || fail "job create refused the MPI container job"
  timeout 180 "$exe" job wait -g rg -w ws -e e -n m || fail "the MPI job did not succeed"
  said=$(find "$BATCHAI_HOME" -path '*/jobs/m/*' -path '*stdouterr*' -name stdout.txt -exec cat {} + 2>/dev/null)
  for r in 0 1; do
    grep -qx "rank $r in batchai-node-$r" <<<"$said" || fail "rank $r did not run in node $r's container: $said"
  done
  [ -z "$said" ] && cat "$(find "$BATCHAI_HOME" -path '*/jobs/m/*' -name stderr.txt | head -1)"
else
  echo "no MPI image (${mpi_tar:-not given}): the MPI job is left out"
fi
keys=$(ls "$BATCHAI_HOME/jobs" 2>/dev/null | paste -sd'|')
b group delete -n rg -y > /dev/null 2>&1
# This test's containers only (their names hold the job keys): other tests may run beside it.
key_containers() { podman ps -a --format '{{.Names}}' | grep -Ec "^batchai-(${keys:-none})-" ; }
for _ in $(seq 1 50); do [ "$(key_containers)" = 0 ] && break; sleep 0.2; done
[ "$(key_containers)" = 0 ] || fail "containers left: $(podman ps -a --format '{{.Names}}')"
[ "$failures" = 0 ] && echo "all Slurm container checks passed" || echo "$failures Slurm container check(s) failed"
[ "$failures" = 0 ]
