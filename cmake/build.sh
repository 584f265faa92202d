#!/usr/bin/env bash
# Configures and builds batchai (and its tests and benchmarks) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
build_type="${BATCHAI_BUILD_TYPE:-Release}"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type" ${BATCHAI_CMAKE_ARGS:-}
cmake --build build -j"$(nproc)"
