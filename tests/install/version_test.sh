#!/usr/bin/env bash
# `batchai --version` and `batchai version -o json` (az version's shape): this build's version and
# commit, its plugins (beside a build-tree executable, in <prefix>/lib/batchai when installed),
# the CPU backend with the trainer, no Slurm client when sinfo cannot be found.
# Usage: version_test.sh BATCHAI_EXECUTABLE PROJECT_VERSION [PLUGIN_FOLDER]
set -uo pipefail
exe="${1:?usage: version_test.sh BATCHAI_EXECUTABLE PROJECT_VERSION [PLUGIN_FOLDER]}" version="${2:?}"
plugins="${3:-$(cd "$(dirname "$exe")" && pwd -P)}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

first="$("$exe" --version | head -1)"
[[ "$first" =~ ^batchai\ ${version//./\\.}\ \(commit\ [A-Za-z0-9._+-]+\)$ ]] || fail "--version says '$first'"
"$exe" --version | grep -q '^CPU kernels: oneDNN, OpenBLAS$' || fail "--version names no CPU kernels"

json="$("$exe" version -o json)" || fail "version -o json exited $?"
check() {  # check <JMESPath> <expected tsv value>
  local got
  got="$("$exe" version --query "$1" -o tsv)"
  [ "$got" = "$2" ] || fail "version: $1 is '$got', expected '$2'"
}
check batchai "$version"
check "length(keys(extensions))" 0
check plugins.trainer.path "$plugins/libbatchai_trainer.so"
check plugins.trainer.present true
check plugins.serve.path "$plugins/libbatchai_serve.so"
check plugins.serve.present true
check backends.cpu "oneDNN, OpenBLAS"
[ "$(PATH=/nonexistent "$exe" version --query 'backends.slurm == null' -o tsv)" = true ] ||
  fail "without sinfo on PATH, backends.slurm is not null"
[ "$(PATH=/nonexistent "$exe" version --query 'type(backends.cudaDevices)' -o tsv)" = number ] ||
  fail "backends.cudaDevices is not a number"
echo "$json" | grep -q '"commit": "' || fail "no commit in $json"

[ "$failures" = 0 ] && echo "version checks passed" || echo "$failures version check(s) failed"
[ "$failures" = 0 ]
