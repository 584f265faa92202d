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

# The Slurm client: its version from `sinfo --version`; "unconfigured" without a slurm.conf (not
# run) or when it hangs (stopped after 2 s).
fake="$(mktemp -d -t batchai-version-test.XXXXXX)"
trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\necho "slurm-wlm 22.05.8"\n' > "$fake/sinfo"
chmod +x "$fake/sinfo"
: > "$fake/slurm.conf"
slurm() { PATH="$fake:/usr/bin:/bin" "$exe" version --query backends.slurm -o tsv; }
[ "$(SLURM_CONF="$fake/slurm.conf" slurm)" = 22.05.8 ] || fail "the fake sinfo's version reads '$(SLURM_CONF="$fake/slurm.conf" slurm)'"
[ "$(SLURM_CONF="$fake/none.conf" slurm)" = unconfigured ] || fail "without a slurm.conf: '$(SLURM_CONF="$fake/none.conf" slurm)'"
printf '#!/bin/sh\nexec sleep 30\n' > "$fake/sinfo"
start=$SECONDS
[ "$(SLURM_CONF="$fake/slurm.conf" slurm)" = unconfigured ] || fail "a hanging sinfo is not 'unconfigured'"
(( SECONDS - start <= 5 )) || fail "a hanging sinfo held batchai version for $(( SECONDS - start )) s"

[ "$failures" = 0 ] && echo "version checks passed" || echo "$failures version check(s) failed"
[ "$failures" = 0 ]
