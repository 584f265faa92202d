#!/bin/bash
# shellcheck disable=SC2015,SC2016  # ok() never fails; job commands are quoted for the hosts
# Checks the raw multi-host rig (rig.sh; issue 52 part 1), no batchai involved.
#   rig_test.sh check RIG BASE    on the rig the CTest fixture "multihost" started (3 hosts): hosts,
#                                 names, addresses, private /tmp, the shared and hidden folders, Open
#                                 MPI across hosts, a host cut off and mended
#   rig_test.sh stop RIG BASE     the fixture's cleanup: a job running and a host cut off, then
#                                 `rig.sh stop` twice, then nothing of the rig may be left
#   rig_test.sh failed-start RIG BASE   a start that fails half-way (its port taken) or is
#                                 interrupted leaves nothing
# Exits 77 (skip) where rig.sh says namespaces or bridges are not permitted.
set -u
[ $# -eq 3 ] || { echo "usage: $0 check|stop|failed-start RIG BASE" >&2; exit 2; }
MODE=$1 RIG=$2 BASE=$3
failures=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() { [ "$failures" = 0 ] && { echo "all checks passed"; exit 0; }; echo "$failures check(s) failed"; exit 1; }
on() { "$RIG" exec "$BASE" "$@"; }
# Open MPI settings from the caller's environment would travel into the jobs (sbatch --export=ALL)
unset "${!OMPI_MCA_@}"

load_env() {
  if [ ! -f "$BASE/rig.env" ]; then
    "$RIG" check "$BASE" || exit $?   # 77: not permitted here
    echo "FAIL: no rig in $BASE (its start failed)"; exit 1
  fi
  # shellcheck disable=SC1091
  . "$BASE/rig.env"
  export SLURM_CONF
}

# wait_job ID SECONDS: until the job left the queue; prints its state.
wait_job() {
  local deadline=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$deadline" ] && [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do sleep 0.5; done
  scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' || echo "JobState=unknown"
}

# check_hosts WHAT OUTPUT: one line "nodename hostname address" per host, all distinct, as the rig says.
check_hosts() {
  local names addrs
  names=$(awk '$1 == $2 { print $1 }' <<< "$2" | sort -u | tr '\n' ' ')
  addrs=$(awk '{ print $3 }' <<< "$2" | sort -u | tr '\n' ' ')
  if [ "$names" = "$(tr ' ' '\n' <<< "$RIG_HOSTS" | sort | tr '\n' ' ')" ] &&
     [ "$addrs" = "$(tr ' ' '\n' <<< "$RIG_ADDRS" | sort | tr '\n' ' ')" ] && [ "$(wc -l <<< "$2")" = 3 ]; then
    ok "$1 ran on 3 hosts: $(tr '\n' ';' <<< "$2")"
  else
    bad "$1 printed '$2' (wanted SLURMD_NODENAME = hostname for $RIG_HOSTS, addresses $RIG_ADDRS)"
  fi
}

# node_state NODE: its state as sinfo shows it ("idle", "idle*", "down*", ...).
node_state() { timeout 10 sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }

check_rig() {
  load_env
  cd "$RIG_SHARED" || exit 1   # jobs start in the caller's folder: one every host has
  local out id t0 state mark=rigtest.$$
  out=$(timeout 10 sinfo -h -N -o '%N %T' | sort -u)
  [ "$(grep -c ' idle$' <<< "$out")" = 3 ] && ok "3 nodes idle" || bad "nodes not all idle: $out"

  local who='echo "$SLURMD_NODENAME $(hostname) $(hostname -I | cut -d" " -f1)"'
  out=$(timeout 60 srun -N3 --ntasks-per-node=1 bash -c "$who" 2>&1)
  check_hosts "srun -N3" "$(sort <<< "$out")"
  id=$(sbatch --parsable -N3 -o "$RIG_SHARED/$mark.who" --wrap "srun bash -c '$who'")
  state=$(wait_job "$id" 60)
  check_hosts "sbatch -N3 ($state)" "$(sort "$RIG_SHARED/$mark.who" 2>&1)"

  on h1 sh -c "touch /tmp/$mark /dev/shm/$mark && ls /tmp/$mark /dev/shm/$mark" > /dev/null 2>&1 ||
    bad "h1 could not write its /tmp and /dev/shm"
  if on h2 sh -c "[ ! -e /tmp/$mark ] && [ ! -e /dev/shm/$mark ]" && [ ! -e "/tmp/$mark" ] && [ ! -e "/dev/shm/$mark" ]; then
    ok "/tmp and /dev/shm private per host"
  else
    bad "a file made in h1's /tmp or /dev/shm is seen on h2 or the login host"
  fi
  on h1 rm -f "/tmp/$mark" "/dev/shm/$mark"

  echo "$mark" > "$RIG_LOGIN/$mark"
  if on h1 sh -c "[ ! -e '$RIG_LOGIN/$mark' ] && ! touch '$RIG_LOGIN/x' 2>/dev/null"; then
    ok "$RIG_LOGIN is hidden (empty, not writable) on compute hosts"
  else
    bad "$RIG_LOGIN is visible or writable on h1"
  fi
  rm -f "$RIG_LOGIN/$mark"
  on h1 sh -c "echo $mark > '$RIG_SHARED/$mark'"
  local devs="" h
  for h in $RIG_HOSTS login; do
    [ "$(on "$h" cat "$RIG_SHARED/$mark" 2>&1)" = "$mark" ] || bad "$h does not see h1's file in $RIG_SHARED"
    devs+="$(on "$h" stat -c %d "$RIG_SHARED") "
  done
  [ "$(tr ' ' '\n' <<< "$devs" | sort -u | grep -c .)" = 1 ] && ok "$RIG_SHARED is one filesystem on all hosts" ||
    bad "$RIG_SHARED differs between hosts (devices $devs)"
  rm -f "$RIG_SHARED/$mark" "$RIG_SHARED/$mark.who"

  if grep -qwE "h1|$RIG_LOGIN_ADDR" /etc/hosts || awk '$2 == "/etc/hosts"' /proc/mounts | grep -q . ||
     [ /etc/hosts -nt "$BASE/rig.env" ]; then
    bad "the machine's /etc/hosts was changed or covered"
  else
    ok "the machine's /etc/hosts untouched; h1 resolves h2 to $(on h1 getent hosts h2 | cut -d' ' -f1)"
  fi

  id=$(sbatch --parsable -N2 --ntasks-per-node=2 -o "$RIG_SHARED/$mark.mpi" \
    --wrap 'env | grep "^OMPI_MCA_"; mpirun --allow-run-as-root -np 4 --map-by node hostname')
  state=$(wait_job "$id" 120)
  out=$(sort "$RIG_SHARED/$mark.mpi" 2>&1 | tr '\n' ' ')
  [ "$out" = "h1 h1 h2 h2 " ] && ok "mpirun -np 4 --map-by node across 2 hosts, no OMPI_MCA_*: $out($state)" ||
    bad "mpirun across 2 hosts printed '$out' ($state)"
  rm -f "$RIG_SHARED/$mark.mpi"

  "$RIG" cut "$BASE" h3
  t0=$SECONDS
  while state=$(node_state h3); [[ "$state" != *'*' ]] && [ $((SECONDS - t0)) -lt 60 ]; do sleep 1; done
  [[ "$state" == *'*' ]] && ok "h3 cut off: '$state' (not responding) after $((SECONDS - t0)) s" ||
    bad "h3 cut off but still '$state' after 60 s"
  "$RIG" mend "$BASE" h3
  # A mend can land just as SlurmdTimeout (30 s) marks the host DOWN; it then comes back only
  # when slurmctld next pings its down hosts (seen: later than 60 s with the whole suite running).
  t0=$SECONDS
  while state=$(node_state h3); [ "$state" != idle ] && [ $((SECONDS - t0)) -lt 150 ]; do sleep 1; done
  [ "$state" = idle ] && ok "h3 mended: idle again after $((SECONDS - t0)) s" || bad "h3 mended but '$state' after 150 s"
  finish
}

# nothing_left NAMESPACES HASH: no process in those namespaces, no netns, link or mount of the rig.
nothing_left() {
  local p id left=""
  for p in /proc/[0-9]*; do
    for id in $(readlink "$p/ns/net" "$p/ns/mnt" 2>/dev/null); do
      grep -qxF "$id" <<< "$1" && { left+=" ${p#/proc/}($(cat "$p/comm" 2>/dev/null))"; break; }
    done
  done
  [ -z "$left" ] && ok "no process left in the rig's namespaces" || bad "processes left in the rig's namespaces:$left"
  if [ -n "$2" ]; then
    left=$(ip netns list | grep "^rig$2" ; ip -o link show | grep -E ": r[bv]$2")
    [ -z "$left" ] && ok "no namespace, veth or bridge of the rig left" || bad "left: $left"
  fi
  left=$(awk -v b="$BASE" '$2 == b || index($2, b "/") == 1' /proc/mounts)
  [ -z "$left" ] && ok "no mount under $BASE" || bad "mounts left: $left"
}

# The fixture's cleanup: stops the rig in a hard state (a job on every host, h2 cut off), then checks.
stop_rig() {
  local ns="" hash="" h id f kind fd pins=()
  if [ -f "$BASE/rig.env" ]; then
    # shellcheck disable=SC1091
    . "$BASE/rig.env"
    export SLURM_CONF
    hash=${RIG_BRIDGE#rb}
    for h in $RIG_HOSTS; do ns+="$(on "$h" readlink /proc/self/ns/net /proc/self/ns/mnt)"$'\n'; done
    # Pinned until the check is done: a freed namespace's number can go to a new one (another
    # test's container running `sleep`), whose processes would then look left behind.
    for f in "$BASE"/run/keeper-h*.pid; do
      for kind in net mnt; do exec {fd}<"/proc/$(cat "$f")/ns/$kind" && pins+=("$fd"); done
    done 2>/dev/null
    id=$(timeout 10 sbatch --parsable -N3 -o /dev/null --wrap 'srun sleep 300' 2>/dev/null) &&
      for _ in $(seq 1 50); do [ "$(squeue -h -j "$id" -o %T 2>/dev/null)" = RUNNING ] && break; sleep 0.2; done
    "$RIG" cut "$BASE" h2 || true
  fi
  local t0=$SECONDS
  "$RIG" stop "$BASE" && ok "stop with a job running and h2 cut off ($((SECONDS - t0)) s)" || bad "stop failed"
  "$RIG" stop "$BASE" > /dev/null && ok "stop again (idempotent)" || bad "a second stop failed"
  [ -n "$ns" ] || { "$RIG" check "$BASE" || exit $?; }
  nothing_left "$ns" "$hash"
  for fd in "${pins[@]}"; do exec {fd}<&-; done
  finish
}

# refused RC WORDS CMD...: CMD exits RC and says WORDS, before it starts anything.
refused() {
  local want=$1 words=$2 err rc
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  [ "$rc" = "$want" ] && [[ "$err" == *"$words"* ]] && ok "refused: ${*:2} ($words)" ||
    bad "$* -> exit $rc, '$err' (wanted exit $want and '$words')"
}

# A start that fails after the bridge, the shared tmpfs and the login's munged: its port is taken.
failed_start() {
  "$RIG" check "$BASE" || exit $?
  refused 1 "N must be 2..8" "$RIG" start "$BASE" 9
  refused 1 "N must be 2..8" "$RIG" start "$BASE" '2;id'
  refused 1 "absolute path" "$RIG" start relative/base 2
  refused 1 "not be under /tmp" "$RIG" start /tmp/rig 2
  refused 1 "may hold only" "$RIG" start "$BASE/a b" 2
  refused 1 "PORT_BASE must be" env PORT_BASE=80 "$RIG" start "$BASE" 2
  refused 1 "HOST must be" "$RIG" exec "$BASE" ../h1 true
  refused 1 "is not running" "$RIG" cut "$BASE" h1
  refused 2 "usage" "$RIG" exec "$BASE" h1
  local port=$((30000 + RANDOM % 2000)) holder out rc
  python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); time.sleep(120)' \
    "$port" & holder=$!
  sleep 0.5
  out=$(PORT_BASE=$port START_TIMEOUT_S=10 "$RIG" start "$BASE" 2 2>&1)
  rc=$?
  kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
  [ "$rc" = 1 ] && ok "start with its port taken exits 1" || bad "start with its port taken exited $rc: $out"
  [ ! -f "$BASE/rig.env" ] && ok "no rig.env after a failed start" || bad "rig.env written by a failed start"
  local hash
  hash=$(printf '%s' "${BASE%/}" | md5sum | cut -c1-6)
  nothing_left "" "$hash"
  pgrep -a munged | grep -F "$BASE/" && bad "a munged of the failed start is left" || ok "no munged of it left"
  # interrupted while its hosts come up (wherever the signal lands, nothing may be left). TERM, not
  # INT: a shell started with INT ignored (as a test may be) cannot trap it
  timeout -s TERM 0.6 "$RIG" start "$BASE" 3 > /dev/null 2>&1
  rc=$?
  if [ -f "$BASE/rig.env" ]; then
    bad "a start sent TERM after 0.6 s finished anyway (exit $rc)"
    "$RIG" stop "$BASE" > /dev/null
  else
    ok "a start sent TERM after 0.6 s ends (exit $rc) without rig.env"
  fi
  nothing_left "" "$hash"
  pgrep -a munged | grep -F "$BASE/" && bad "a munged of the interrupted start is left" || ok "no munged of it left"
  finish
}

case "$MODE" in
  check) check_rig ;;
  stop) stop_rig ;;
  failed-start) failed_start ;;
  *) echo "usage: $0 check|stop|failed-start RIG BASE" >&2; exit 2 ;;
esac
