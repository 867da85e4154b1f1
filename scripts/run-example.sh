#!/usr/bin/env bash
# Quick start: install, build, and approximate the post-impact set of a bundled model's first impact
# (summary on the terminal, figure in rocking_block.png, samples in rocking_block.csv):
#   ./scripts/run-example.sh [MODEL] [svi-sample options]      MODEL: a file in models/ without .xml
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" > /dev/null
./build/svi-sample --model "models/${1:-rocking_block}.xml" "${@:2}"
