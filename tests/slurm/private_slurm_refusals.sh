#!/bin/bash
# private_slurm.sh refuses what it cannot use safely, before it starts or writes anything.
# Usage: private_slurm_refusals.sh SCRIPT SCRATCH   (SCRATCH: an absolute folder it may use)
set -u
SCRIPT=$1
SCRATCH=$2
failures=0
expect_refused() {  # expected exit code, expected words in stderr, then the invocation
  local want=$1 words=$2 err rc
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != "$want" ] || [[ "$err" != *"$words"* ]]; then
    echo "FAIL: $* -> exit $rc, '$err' (wanted exit $want and '$words')"
    failures=$((failures + 1))
  fi
}
expect_refused 1 "absolute path" "$SCRIPT" start relative/base 3
expect_refused 1 "root folder" "$SCRIPT" start / 3
expect_refused 1 "white space" "$SCRIPT" start "$SCRATCH/a b" 3
expect_refused 1 "NODES must be" "$SCRIPT" start "$SCRATCH/n" 0
expect_refused 1 "NODES must be" "$SCRIPT" start "$SCRATCH/n" 100
expect_refused 1 "NODES must be" "$SCRIPT" start "$SCRATCH/n" '3;id'
expect_refused 1 "PORT_BASE must be" env PORT_BASE=80 "$SCRIPT" start "$SCRATCH/p" 3
expect_refused 1 "PORT_BASE must be" env PORT_BASE=65534 "$SCRIPT" start "$SCRATCH/p" 3
expect_refused 1 "PORT_BASE must be" env 'PORT_BASE=17000 ' "$SCRIPT" start "$SCRATCH/p" 3
expect_refused 1 "CPUS must be" env CPUS=0 "$SCRIPT" start "$SCRATCH/c" 3
expect_refused 1 "START_TIMEOUT_S" env START_TIMEOUT_S=x "$SCRIPT" start "$SCRATCH/t" 3
expect_refused 2 "usage" "$SCRIPT" restart "$SCRATCH/u"
expect_refused 2 "usage" "$SCRIPT" start
# a pid file holding something other than a pid is never signalled
mkdir -p "$SCRATCH/junk/run"
echo "-1" > "$SCRATCH/junk/run/slurmd-node1.pid"
echo "1 2" > "$SCRATCH/junk/run/munged.pid"
"$SCRIPT" stop "$SCRATCH/junk" >/dev/null || { echo "FAIL: stop with junk pid files"; failures=$((failures + 1)); }
[ -z "$(ls "$SCRATCH/junk/run")" ] || { echo "FAIL: junk pid files left"; failures=$((failures + 1)); }
rm -rf "$SCRATCH/junk"
[ "$failures" = 0 ] && echo "all refusals as expected"
[ "$failures" = 0 ]
