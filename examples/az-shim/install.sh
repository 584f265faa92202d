#!/usr/bin/env bash
# Installs the az shim (examples/az-shim/az) as DIR/az, a symbolic link back to this checkout, so the
# Batch AI tutorial's `az batchai|group|storage ...` commands run batchai. Only on request, and
# never over a real Azure CLI: refuses when another `az` is on PATH or in DIR unless --force.
# Usage: examples/az-shim/install.sh [--force] DIR    (then put DIR on PATH)
set -euo pipefail
shim="$(cd "$(dirname "$0")" && pwd)/az"
force=0 dir=""
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "install.sh: unknown option '$arg' (usage: install.sh [--force] DIR)" >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "install.sh: one DIR only" >&2; exit 2; }; dir="$arg" ;;
  esac
done
[ -n "$dir" ] || { echo "usage: install.sh [--force] DIR   (installs DIR/az; put DIR on PATH)" >&2; exit 2; }
mkdir -p "$dir"
target="$(cd "$dir" && pwd)/az"

is_shim() { [ "$(readlink -f "$1")" = "$(readlink -f "$shim")" ]; }

# A real az already on PATH would be shadowed (or would shadow the shim): say so loudly.
if existing="$(command -v az 2>/dev/null)" && ! is_shim "$existing"; then
  if [ "$force" = 1 ]; then
    echo "WARNING: another az is on PATH ($existing). DIR/az shadows it only where DIR comes first on PATH;" >&2
    echo "WARNING: then 'az' runs batchai for batchai/group/storage and refuses everything else." >&2
  else
    echo "install.sh: an az is already on PATH ($existing): not installing the shim, so it cannot" >&2
    echo "shadow the real Azure CLI by accident. Use --force to install anyway, or call batchai directly." >&2
    exit 1
  fi
fi
if [ -e "$target" ] || [ -L "$target" ]; then
  if is_shim "$target"; then
    echo "The az shim is already installed: $target -> $shim"
    exit 0
  fi
  if [ "$force" != 1 ]; then
    echo "install.sh: $target exists and is not the shim: not replacing it (use --force)." >&2
    exit 1
  fi
  echo "WARNING: replacing $target with the az shim." >&2
  rm -f "$target"
fi
ln -s "$shim" "$target"
echo "Installed the az shim: $target -> $shim"
case ":$PATH:" in
  *":$(dirname "$target"):"*) ;;
  *) echo "Add it to PATH: export PATH=\"$(dirname "$target"):\$PATH\"" ;;
esac
