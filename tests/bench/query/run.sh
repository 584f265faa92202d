#!/bin/sh
# Builds query_bench (if a build folder is given or found) and prints the side-by-side table of
# batchai's JMESPath engine against Debian's python3-jmespath for benchmarks.json.
# usage: tests/bench/query/run.sh [BUILD_DIR] [extra compare_python.py options]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
if [ ! -d "$build" ]; then
  echo "run.sh: build folder $build not found; configure with: cmake -S $root -B $build -G Ninja" >&2
  exit 1
fi
cmake --build "$build" --target query_bench >/dev/null
binary=$(find "$build" -type f -name query_bench -perm -u+x | head -n 1)
if [ -z "$binary" ]; then
  echo "run.sh: query_bench was not built in $build" >&2
  exit 1
fi
# Debian's interpreter: python3-jmespath is installed for /usr/bin/python3, not for other pythons on PATH.
exec /usr/bin/python3 "$here/compare_python.py" --binary "$binary" "$@"
