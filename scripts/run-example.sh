#!/usr/bin/env bash
# Quick start: install, build, and approximate the rocking block's post-impact set
# (summary on the terminal, figure in rocking_block.png, samples in rocking_block.csv).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" > /dev/null
./build/svi-sample --example "${1:-rocking_block}" "${@:2}"
