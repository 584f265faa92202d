#!/usr/bin/env bash
# Runs the rank-failure driver under mpiexec and checks the whole job ends within 30 s with a
# non-zero exit status and the expected message (no rank left waiting for a dead peer).
# Usage: rank_failure_test.sh <mpiexec> <driver> <mode> <ranks> <grep -E pattern>
set -u
mpiexec=$1 driver=$2 mode=$3 ranks=$4 pattern=$5
start=$(date +%s)
out=$(timeout 60 "$mpiexec" -n "$ranks" --oversubscribe --allow-run-as-root "$driver" "$mode" 2>&1)
rc=$?
elapsed=$(( $(date +%s) - start ))
printf '%s\n--- exit status %d after %d s\n' "$out" "$rc" "$elapsed"
if [ "$rc" -eq 124 ]; then echo "FAIL: mpiexec still running after 60 s (a rank hung)"; exit 1; fi
if [ "$rc" -eq 0 ]; then echo "FAIL: expected a non-zero exit status"; exit 1; fi
if [ "$elapsed" -gt 30 ]; then echo "FAIL: took ${elapsed} s, expected <= 30 s"; exit 1; fi
if ! grep -Eq -- "$pattern" <<<"$out"; then echo "FAIL: output lacks /$pattern/"; exit 1; fi
echo PASS
