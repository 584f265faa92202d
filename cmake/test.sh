#!/usr/bin/env bash
# Runs every test of the build in ./build (unit, CLI scenario, MPI; CUDA tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 900 "$@"
