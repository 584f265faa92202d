# shellcheck shell=bash
# Helpers shared by the private test Slurms (private_slurm.sh on loopback, multihost/rig.sh with
# hosts): pid files, bounded stops, log tails and munged. Sourced, not run.

# The pid recorded in a pid file, if it is a plain positive number of a live process.
live_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null || true)
  [[ "$pid" =~ ^[1-9][0-9]{0,9}$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
  return 0
}

# Ends the given pids: TERM to all, a bounded wait (STOP_WAIT_TENTHS tenths of a second, default
# 10 s), KILL what is left, a bounded wait again.
stop_pids() {
  local pid alive=("$@")
  [ $# -gt 0 ] || return 0
  kill "$@" 2>/dev/null || true
  for _ in $(seq 1 "${STOP_WAIT_TENTHS:-100}"); do
    alive=()
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    [ ${#alive[@]} -eq 0 ] && return 0
    sleep 0.1
  done
  for pid in "${alive[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${alive[@]}"; do
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  return 0
}

# Stops the processes of the given pid files (stop_pids) and removes the files.
stop_pid_files() {
  local f pid pids=()
  for f in "$@"; do
    [ -f "$f" ] || continue
    pid=$(live_pid "$f")
    [ -n "$pid" ] && pids+=("$pid")
  done
  stop_pids "${pids[@]}"
  rm -f "$@"
}

# Prints the last lines of each given log that exists, so a failed start says why.
tail_logs() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    echo "--- tail of $f" >&2
    tail -n 15 "$f" >&2
  done
}

# start_munged DIR SOCKET_DIR KEY [PREFIX...]: one munged with its pid, log and seed in DIR, its
# socket in SOCKET_DIR, the key KEY (made if missing). PREFIX, if given, runs it (e.g. nsenter into a
# host's namespaces). Root runs munged as the packaged munge user: munged refuses root.
start_munged() {
  local dir=$1 sock=$2 key=$3
  shift 3
  mkdir -p "$dir" "$sock"
  [ -f "$key" ] || head -c 1024 /dev/urandom > "$key"
  chmod 700 "$dir"
  chmod 400 "$key"
  chmod 755 "$sock"   # munged refuses a socket folder that is not world-executable
  local args=(munged --socket="$sock/munge.socket" --key-file="$key" --pid-file="$dir/munged.pid"
              --log-file="$dir/munged.log" --seed-file="$dir/munged.seed")
  if [ "$(id -u)" = 0 ]; then
    chown -R munge:munge "$dir" "$sock"
    chown munge:munge "$key"
    "$@" runuser -u munge -- "${args[@]}"
  else
    "$@" "${args[@]}"
  fi
}

# build_test_image DIR TAG: a tiny image built offline (busybox, and bash with its libraries; the
# file /etc/batchai-test-image says "batchai-slurm-image"), imported into Podman's store as TAG.
build_test_image() {
  local d=$1 tag=$2 a l
  mkdir -p "$d/bin" "$d/etc" "$d/tmp"
  cp /bin/busybox "$d/bin/"
  for a in $(/bin/busybox --list); do [ -e "$d/bin/$a" ] || ln -s busybox "$d/bin/$a"; done
  cp /bin/bash "$d/bin/bash"
  for l in $(ldd /bin/bash | grep -o '/[^ ]*'); do mkdir -p "$d$(dirname "$l")"; cp -L "$l" "$d$l"; done
  echo batchai-slurm-image > "$d/etc/batchai-test-image"
  tar -C "$d" -cf "$d.tar" . && podman import -q "$d.tar" "$tag" > /dev/null
}
