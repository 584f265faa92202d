#!/usr/bin/env bash
# The az shim (examples/az-shim/az) and its installer: forwards az batchai|group|storage to batchai, refuses
# anything else with a clear message, installs only into the folder asked for and never over a real az.
# Usage: az_shim_test.sh BATCHAI_EXECUTABLE
set -uo pipefail
exe="${1:?usage: az_shim_test.sh BATCHAI_EXECUTABLE}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d -t batchai-az-shim-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# check <description> <expected exit> <output regex> -- <command...>
check() {
  local what="$1" want_rc="$2" pattern="$3" out rc
  shift 4
  out="$("$@" 2>&1)"; rc=$?
  [ "$rc" = "$want_rc" ] || fail "$what: exit $rc, expected $want_rc; output: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "$what: output does not match /$pattern/: $out"
}
export BATCHAI="$exe" BATCHAI_HOME="$tmp/state" BATCHAI_SIM_DELAY_S=0 HOME="$tmp/home"
# A PATH without any az on it, so the installer's "real az" check is under the test's control.
base_path="$tmp/sys"
mkdir -p "$base_path" "$tmp/home"
for tool in bash sh env readlink dirname basename mkdir rm ln cat sed awk grep mktemp pwd; do
  ln -sf "$(command -v "$tool")" "$base_path/$tool"
done

check "installer needs a folder" 2 'usage: install.sh' -- env PATH="$base_path" bash "$root/examples/az-shim/install.sh"
check "install into a new folder" 0 'Installed the az shim' -- env PATH="$base_path" bash "$root/examples/az-shim/install.sh" "$tmp/bin"
[ -L "$tmp/bin/az" ] || fail "install did not create $tmp/bin/az as a link"
check "install again is a no-op" 0 'already installed' -- env PATH="$base_path" bash "$root/examples/az-shim/install.sh" "$tmp/bin"

shim_path="$tmp/bin:$base_path"
check "az group create forwards" 0 'batchai\.horovod' -- env PATH="$shim_path" az group create --name batchai.horovod --location eastus -o tsv
check "az group show forwards" 0 '"location": "eastus"' -- env PATH="$shim_path" az group show --name batchai.horovod
check "az batchai workspace create forwards" 0 'batchaidev' -- env PATH="$shim_path" \
  az batchai workspace create --resource-group batchai.horovod --workspace batchaidev --location eastus -o tsv
check "az batchai exit code of a missing resource" 3 'not found' -- env PATH="$shim_path" \
  az batchai cluster show --resource-group batchai.horovod --workspace batchaidev --name nope
check "az storage forwards" 0 'tutorialstore' -- env PATH="$shim_path" \
  az storage account create --name tutorialstore --resource-group batchai.horovod -o tsv
check "az vm is refused" 2 "'az vm list' is not something this shim can run" -- env PATH="$shim_path" az vm list
check "refusal names what is forwarded" 2 "az batchai \.\.\.', 'az group \.\.\.' and 'az storage" -- env PATH="$shim_path" az login
check "bare az is refused" 2 'not something this shim can run' -- env PATH="$shim_path" az
check "az --help explains the shim" 0 'batchai shim' -- env PATH="$shim_path" az --help

# A real az elsewhere on PATH: refuse without --force, warn loudly with it.
mkdir -p "$tmp/realaz"
printf '#!/bin/sh\necho real az\n' > "$tmp/realaz/az"; chmod +x "$tmp/realaz/az"
check "refuses when a real az is on PATH" 1 'already on PATH .*not installing' -- \
  env PATH="$tmp/realaz:$base_path" bash "$root/examples/az-shim/install.sh" "$tmp/bin2"
[ -e "$tmp/bin2/az" ] && fail "the shim was installed although a real az is on PATH"
check "--force installs with a warning" 0 'WARNING: another az is on PATH' -- \
  env PATH="$tmp/realaz:$base_path" bash "$root/examples/az-shim/install.sh" --force "$tmp/bin2"
# Never replaces a file that is not the shim.
mkdir -p "$tmp/bin3"; printf 'not the shim\n' > "$tmp/bin3/az"
check "does not replace another az in DIR" 1 'exists and is not the shim' -- \
  env PATH="$base_path" bash "$root/examples/az-shim/install.sh" "$tmp/bin3"
[ "$(cat "$tmp/bin3/az")" = "not the shim" ] || fail "the existing $tmp/bin3/az was changed"

[ "$failures" = 0 ] && echo "all az shim checks passed" || echo "$failures az shim check(s) failed"
[ "$failures" = 0 ]
