#!/bin/bash
# A private Slurm whose compute nodes are hosts (README.md beside this script): each compute host
# hI is a network namespace on a Linux bridge with its own address, host name (UTS namespace) and
# mount namespace (private /tmp, /dev/shm, node-local disk at BASE/local, the rig's hosts file over
# /etc/hosts, BASE/login hidden); BASE/shared is one tmpfs seen at the same path everywhere.
# slurmctld and a munged run on the login host (the root namespaces); one munged and one slurmd per
# host. Needs root. Nothing outside BASE, the rig's links and namespaces is written.
#
#   rig.sh start BASE N         N hosts h1..hN (2..8); waits until all are idle; writes BASE/rig.env
#   rig.sh stop BASE            ends every process of the rig, removes links, namespaces, mounts
#   rig.sh exec BASE HOST CMD.. runs CMD on HOST (hI or login) with SLURM_CONF set
#   rig.sh cut|mend BASE HOST   takes HOST's link down / up (a lost host)
#   rig.sh check BASE           exits 77 with the reason when namespaces or bridges are not permitted
#
# Environment: PORT_BASE (slurmctld's port; slurmd listen on PORT_BASE+1; default derived from
# BASE), CPUS (per host, default 2), MEM (MB per host, default 2048), SHARED_MB (size of BASE/shared,
# default 1024), HOST_TMPFS_MB (size of each host's /tmp and /dev/shm, default 2048),
# START_TIMEOUT_S (default 30).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/slurm_common.sh
. "$HERE/../slurm_common.sh"

usage() {
  echo "usage: $0 start BASE N | stop BASE | exec BASE HOST CMD... | cut BASE HOST | mend BASE HOST | check BASE" >&2
  exit 2
}
die() { echo "rig: $*" >&2; exit 1; }
skip() { echo "rig: SKIP: $*" >&2; exit 77; }

# Names and addresses derive from a hash of BASE, so rigs of two build folders do not collide.
# Interface names stay within Linux's 15 characters.
derive_names() {
  HASH=$(printf '%s' "$BASE" | md5sum | cut -c1-6)
  BRIDGE=rb$HASH                        # rb + 6 hex
  NET=10.$((0x${HASH:0:4} % 200 + 40)).0  # 10.40..239: clear of the usual 10.0/10.1 networks
  LOGIN_ADDR=$NET.1
  PORT=${PORT_BASE:-$((20000 + 0x${HASH:2:4} % 120 * 100 + 90))}
  SLURM_CONF=$BASE/etc/slurm.conf
}
veth_of() { echo "rv${HASH}h$1"; }    # the host's link, its root end on the bridge
netns_of() { echo "rig${HASH}h$1"; }
addr_of() { echo "$NET.$((10 + $1))"; }

# Namespaces and bridges may be refused (containers without CAP_SYS_ADMIN/CAP_NET_ADMIN).
check_permitted() {
  [ "$(id -u)" = 0 ] || skip "needs root (network, UTS and mount namespaces, a bridge)"
  unshare --net --uts --mount true 2>/dev/null || skip "namespaces are not permitted here (unshare --net --uts --mount failed)"
  local probe=rbprobe$$
  ip link add name "${probe:0:15}" type bridge 2>/dev/null || skip "bridges are not permitted here (ip link add type bridge failed)"
  ip link del "${probe:0:15}" 2>/dev/null || true
}

show_logs() {
  tail_logs "$BASE"/log/*.log "$BASE"/munge/munged.log "$BASE"/hosts/*/munge/munged.log "$BASE"/log/keeper-*.log
}

# Mount points at or under BASE in this (root) mount namespace, deepest first.
mounts_under() {
  awk -v b="$BASE" '$2 == b || index($2, b "/") == 1 { print $2 }' /proc/mounts | awk '{ print length, $0 }' |
    sort -rn | cut -d' ' -f2-
}

# The namespaces of the rig ("net:[N]" / "mnt:[N]"), from the live namespace files and from what
# start recorded, so processes are found even when /run/netns or a keeper is already gone.
rig_namespaces() {
  local f
  for f in /run/netns/rig"$HASH"h*; do
    [ -e "$f" ] && echo "net:[$(stat -L -c %i "$f")]"
  done
  cat "$BASE"/run/ns-h* 2>/dev/null || true
}

# Every process whose network or mount namespace is one of the rig's (one pass over /proc).
rig_processes() {
  [ -n "$1" ] || return 0
  find /proc/[0-9]*/ns -maxdepth 1 \( -name net -o -name mnt \) -printf '%h %l\n' 2>/dev/null |
    NS=$1 awk 'BEGIN { n = split(ENVIRON["NS"], a, "\n"); for (i = 1; i <= n; i++) rig[a[i]] = 1 }
                    $2 in rig { split($1, p, "/"); print p[3] }' | sort -u
}

stop() {
  derive_names
  shopt -s nullglob
  # Jobs' slurmstepd outlive slurmd: have the controller end them while it still runs (bounded;
  # a cut host never answers, its processes are ended below by namespace)
  if [ -n "$(live_pid "$BASE/run/slurmctld.pid")" ] && [ -f "$SLURM_CONF" ]; then
    SLURM_CONF=$SLURM_CONF timeout 10 scancel --partition=batchai 2>/dev/null || true
    for _ in $(seq 1 25); do
      [ -z "$(SLURM_CONF=$SLURM_CONF timeout 5 squeue -h -o %i 2>/dev/null || echo busy)" ] && break
      sleep 0.2
    done
  fi
  local ns pids
  ns=$(rig_namespaces)
  # a slurmd cut off from its controller lingers on TERM: KILL comes sooner
  STOP_WAIT_TENTHS=30 stop_pid_files "$BASE"/run/slurmd-*.pid "$BASE/run/slurmctld.pid"
  # everything in the hosts' namespaces (munged, job steps, keepers), twice: ending one may have
  # let another fork; slurmstepd ignores TERM, so KILL comes sooner
  for _ in 1 2; do
    mapfile -t pids < <(rig_processes "$ns")
    STOP_WAIT_TENTHS=30 stop_pids "${pids[@]}"
  done
  # the records of the namespaces go only once nothing is left in them, so a later stop retries
  mapfile -t pids < <(rig_processes "$ns")
  [ ${#pids[@]} -gt 0 ] || rm -f "$BASE"/run/ns-h*
  stop_pid_files "$BASE"/run/*.pid
  local link
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | grep "^rv$HASH" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  for link in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^rig${HASH}h" || true); do
    ip netns del "$link" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  local m
  for m in $(mounts_under); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -f "$BASE/rig.env"
  shopt -u nullglob
  [ ${#pids[@]} -eq 0 ] || die "processes left in the rig's namespaces: ${pids[*]}"
  [ -z "$(mounts_under)" ] || die "mounts left under $BASE: $(mounts_under | tr '\n' ' ')"
}

write_files() {
  local i host
  host=$(hostname -s)
  { echo "127.0.0.1 localhost"
    echo "$LOGIN_ADDR $host login"
    for i in $(seq 1 "$N"); do echo "$(addr_of "$i") h$i"; done; } > "$BASE/etc/hosts"
  chmod 644 "$BASE/etc/hosts"
  cat > "$SLURM_CONF" <<EOF
# Generated by rig.sh: a test cluster of $N hosts on the bridge $BRIDGE ($NET.0/24).
ClusterName=batchai
SlurmctldHost=$host($LOGIN_ADDR)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$BASE/munge-sock/munge.socket
CredType=cred/munge
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/hosts/%n/spool
TmpFS=/tmp
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
EOF
  for i in $(seq 1 "$N"); do
    echo "NodeName=h$i NodeHostname=h$i NodeAddr=$(addr_of "$i") CPUs=$CPUS RealMemory=$MEM State=UNKNOWN" >> "$SLURM_CONF"
  done
  echo "PartitionName=batchai Nodes=h[1-$N] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$SLURM_CONF"
}

# Runs inside a new host's namespaces (rig.sh _host BASE I): its own mounts, then it stays as the
# host's keeper, the process whose namespaces `exec` and slurmd enter.
host_setup() {
  local i=$1 dir=$BASE/hosts/h$1
  hostname "h$i"
  mount -t tmpfs -o "size=${HOST_TMPFS_MB}m,mode=1777" rig-tmp /tmp
  mount -t tmpfs -o "size=${HOST_TMPFS_MB}m,mode=1777" rig-shm /dev/shm
  mount --bind "$BASE/etc/hosts" /etc/hosts
  mount -o remount,bind,ro /etc/hosts
  mount --bind "$dir/local" "$BASE/local"
  # the munge socket path is the same on every host, each host's own munged behind it
  mount --bind "$dir/munge-sock" "$BASE/munge-sock"
  # what only the login host has (the store): an empty, read-only folder here
  mount -t tmpfs -o ro,size=4k,mode=755 rig-hidden "$BASE/login"
  echo $$ > "$BASE/run/keeper-h$i.pid"
  exec sleep infinity
}

start_host() {
  local i=$1 ns veth peer dir=$BASE/hosts/h$1 keeper
  ns=$(netns_of "$i")
  veth=$(veth_of "$i")
  peer=rp${HASH}h$i
  mkdir -p "$dir"/{local,spool,munge,munge-sock}
  chmod 1777 "$dir/local"
  chown munge:munge "$dir/munge-sock"   # munged checks its socket folder's owner
  ip netns add "$ns"
  ip link add "$veth" type veth peer name "$peer"
  ip link set "$peer" netns "$ns"
  ip link set "$veth" master "$BRIDGE" up
  # `ip netns exec` would mount a fresh /sys without cgroups, which slurmd refuses: nsenter --net
  nsenter --net="/run/netns/$ns" sh -c "ip link set lo up && ip link set '$peer' name eth0 &&
    ip addr add '$(addr_of "$i")/24' dev eth0 && ip link set eth0 up"
  # detached (setsid, no inherited output): ctest waits for every holder of a test's output
  nsenter --net="/run/netns/$ns" setsid unshare --uts --mount --propagation private \
    "$HERE/rig.sh" _host "$BASE" "$i" < /dev/null > "$BASE/log/keeper-h$i.log" 2>&1 &
  for _ in $(seq 1 50); do
    keeper=$(live_pid "$BASE/run/keeper-h$i.pid")
    [ -n "$keeper" ] && break
    sleep 0.1
  done
  [ -n "$keeper" ] || fail "host h$i did not come up"
  echo "$(readlink "/proc/$keeper/ns/net") $(readlink "/proc/$keeper/ns/mnt")" | tr ' ' '\n' > "$BASE/run/ns-h$i"
  local enter=(nsenter -t "$keeper" --net --uts --mount)
  start_munged "$dir/munge" "$BASE/munge-sock" "$BASE/munge/munge.key" "${enter[@]}" ||
    fail "munged of h$i did not start"
  "${enter[@]}" slurmd -f "$SLURM_CONF" || fail "slurmd of h$i did not start"
}

# An interrupted or failed start leaves nothing behind.
fail() {
  trap - EXIT INT TERM
  echo "rig: $*" >&2
  show_logs
  stop || true
  exit 1
}

start() {
  [[ "$N" =~ ^[2-8]$ ]] || die "N must be 2..8, not '$N'"
  if ! [[ "$PORT" =~ ^[1-9][0-9]{3,4}$ ]] || [ "$PORT" -lt 1024 ] || [ "$PORT" -gt 65534 ]; then
    die "PORT_BASE must be a port in 1024..65534, not '$PORT'"
  fi
  [[ "$CPUS" =~ ^[1-9][0-9]{0,2}$ ]] || die "CPUS must be 1..999, not '$CPUS'"
  [[ "$MEM" =~ ^[1-9][0-9]{0,6}$ ]] || die "MEM must be 1..9999999 (MB), not '$MEM'"
  [[ "$SHARED_MB" =~ ^[1-9][0-9]{0,5}$ ]] || die "SHARED_MB must be 1..999999, not '$SHARED_MB'"
  [[ "$HOST_TMPFS_MB" =~ ^[1-9][0-9]{0,5}$ ]] || die "HOST_TMPFS_MB must be 1..999999, not '$HOST_TMPFS_MB'"
  check_permitted
  # another network's route on our subnet would make the hosts unreachable
  local other
  other=$(ip route show "$NET.0/24" | grep -v "dev $BRIDGE" || true)
  [ -z "$other" ] || die "the rig's subnet $NET.0/24 is in use ($other): choose another BASE"
  stop   # a leftover rig of this BASE
  trap 'fail "start failed (line $LINENO)"' EXIT
  trap 'fail "start interrupted"' INT TERM
  rm -rf "${BASE:?}"/{etc,state,log,run,hosts,munge,munge-sock}
  mkdir -p "$BASE"/{etc,state,log,run,hosts,munge,munge-sock,shared,login,local}
  chmod 755 "$BASE" "$BASE/hosts"
  # one filesystem for every host, mounted before they start so their namespaces all hold it
  mount -t tmpfs -o "size=${SHARED_MB}m,mode=1777" rig-shared "$BASE/shared"
  ip link add name "$BRIDGE" type bridge
  ip addr add "$LOGIN_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  write_files
  start_munged "$BASE/munge" "$BASE/munge-sock" "$BASE/munge/munge.key" || fail "munged did not start"
  cp "$BASE/munge/munged.pid" "$BASE/run/munged-login.pid"
  slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start"
  local i
  for i in $(seq 1 "$N"); do start_host "$i"; done
  wait_idle "$N" "$START_TIMEOUT_S" || fail "start failed"
  local hosts="" addrs=""
  for i in $(seq 1 "$N"); do hosts+=" h$i"; addrs+=" $(addr_of "$i")"; done
  cat > "$BASE/rig.env" <<EOF
SLURM_CONF=$SLURM_CONF
RIG_SHARED=$BASE/shared
RIG_LOGIN=$BASE/login
RIG_LOCAL=$BASE/local
RIG_HOSTS="${hosts# }"
RIG_ADDRS="${addrs# }"
RIG_LOGIN_ADDR=$LOGIN_ADDR
RIG_BRIDGE=$BRIDGE
EOF
  trap - EXIT INT TERM
  echo "rig up: $N hosts idle on $BRIDGE ($NET.0/24); . $BASE/rig.env or:"
  echo "export SLURM_CONF=$SLURM_CONF"
}

# wait_idle COUNT SECONDS: until COUNT nodes are idle (bounded); says why not.
wait_idle() {
  local deadline=$((SECONDS + $2)) idle=0
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ -n "$(live_pid "$BASE/run/slurmctld.pid")" ] || { echo "rig: slurmctld died (port $PORT taken? set PORT_BASE)" >&2; return 1; }
    idle=$(SLURM_CONF=$SLURM_CONF timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l || true)
    [ "$idle" -ge "$1" ] && return 0
    sleep 0.2
  done
  SLURM_CONF=$SLURM_CONF timeout 5 sinfo -N >&2 || true
  echo "rig: only $idle of $1 hosts became idle within $2 s" >&2
  return 1
}

# The keeper pid of HOST (h1..h8), or a refusal.
keeper_of() {
  [[ "$1" =~ ^h[1-8]$ ]] || die "HOST must be login or h1..h8, not '$1'"
  local pid
  pid=$(live_pid "$BASE/run/keeper-$1.pid")
  [ -n "$pid" ] || die "host $1 is not running in $BASE"
  echo "$pid"
}

run_on() {
  local host=$1
  shift
  [ $# -gt 0 ] || usage
  export SLURM_CONF
  [ "$host" = login ] && exec "$@"
  local keeper
  keeper=$(keeper_of "$host")
  # entering a mount namespace moves to its root folder: come back to ours where the host has it
  # shellcheck disable=SC2016  # expanded by the inner sh
  exec nsenter -t "$keeper" --net --uts --mount sh -c 'cd "$0" 2>/dev/null || cd /; exec "$@"' "$PWD" "$@"
}

set_link() {
  keeper_of "$1" > /dev/null
  ip link set "$(veth_of "${1#h}")" "$2"
}

[ $# -ge 2 ] || usage
CMD=$1
BASE=${2%/}
case "$BASE" in
  /*) ;;
  *) die "BASE must be an absolute path, not '$BASE'" ;;
esac
[ -n "$BASE" ] || die "BASE must not be the root folder"
[[ "$BASE" =~ ^[A-Za-z0-9._/+-]+$ ]] || die "BASE may hold only letters, digits and . _ / + - (slurm.conf and mounts take it verbatim)"
# the hosts mount their own /tmp and /dev/shm: a BASE below them would vanish there
case "$BASE/" in
  /tmp/* | /dev/shm/*) die "BASE must not be under /tmp or /dev/shm (each host has its own): '$BASE'" ;;
esac
N=${3:-}
CPUS=${CPUS:-2}
MEM=${MEM:-2048}
SHARED_MB=${SHARED_MB:-1024}
HOST_TMPFS_MB=${HOST_TMPFS_MB:-2048}
START_TIMEOUT_S=${START_TIMEOUT_S:-30}
[[ "$START_TIMEOUT_S" =~ ^[1-9][0-9]{0,3}$ ]] || die "START_TIMEOUT_S must be 1..9999, not '$START_TIMEOUT_S'"
derive_names
case "$CMD" in
  start) [ $# -eq 3 ] || usage; start ;;
  stop) [ $# -eq 2 ] || usage; stop; echo "rig in $BASE stopped" ;;
  exec) [ $# -ge 4 ] || usage; shift 2; run_on "$@" ;;
  cut) [ $# -eq 3 ] || usage; set_link "$3" down ;;
  mend) [ $# -eq 3 ] || usage; set_link "$3" up ;;
  check) check_permitted ;;
  _host) host_setup "$3" ;;
  *) usage ;;
esac
