#!/usr/bin/env bash
# The systemd units of `batchai serve` (packaging/systemd), installed into a temporary prefix,
# pass `systemd-analyze verify` without a word (it exits 0 on unknown keys and bad values, so any
# message fails), run the installed executable, keep the state in the state directory and keep
# their hardening. Exit 77 (skipped) without systemd-analyze.
# Usage: systemd_test.sh CMAKE BUILD_DIR
set -uo pipefail
cmake="${1:?usage: systemd_test.sh CMAKE BUILD_DIR}" build="${2:?}"
command -v systemd-analyze > /dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
tmp="$(mktemp -d -t batchai-systemd-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$cmake" --install "$build" --prefix "$tmp/prefix" --component runtime > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; exit 1; }
mkdir -m 700 "$tmp/runtime"
for scope in system user; do
  unit="$tmp/prefix/lib/systemd/$scope/batchai-serve.service"
  [ -f "$unit" ] || { fail "no $scope unit"; continue; }
  args=(verify --man=no)
  [ "$scope" = user ] && args=(--user verify --man=no)
  XDG_RUNTIME_DIR="$tmp/runtime" systemd-analyze "${args[@]}" "$unit" > "$tmp/verify" 2>&1 || fail "$scope unit: verify exited $?"
  [ -s "$tmp/verify" ] && { cat "$tmp/verify"; fail "$scope unit: systemd-analyze verify has something to say"; }
  grep -qx "ExecStart=$tmp/prefix/bin/batchai serve --port 8443" "$unit" || fail "$scope unit: ExecStart is not the installed batchai"
  for line in 'StateDirectory=batchai' 'Environment=BATCHAI_HOME=%S/batchai' 'NoNewPrivileges=yes'; do
    grep -qx "$line" "$unit" || fail "$scope unit has no $line"
  done
done
for line in 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'DynamicUser=yes' 'CapabilityBoundingSet='; do
  grep -qx "$line" "$tmp/prefix/lib/systemd/system/batchai-serve.service" || fail "the system unit has no $line"
done

[ "$failures" = 0 ] && echo "unit checks passed" || echo "$failures unit check(s) failed"
[ "$failures" = 0 ]
