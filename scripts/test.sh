#!/usr/bin/env bash
# The whole test suite: install dependencies, then build and run CTest twice -- a release build
# with warnings as errors, and an AddressSanitizer + UndefinedBehaviorSanitizer build -- and check
# that a build without the AVX2 clones gives the release build's outcomes bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
JOBS=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSVI_WERROR=ON > /dev/null
cmake --build build -j "$JOBS"
(cd build && ctest --output-on-failure -j "$JOBS")

# the scalar twins of the AVX2 kernels give the release build's outcome bits
cmake -S . -B build-scalar -DCMAKE_BUILD_TYPE=Release -DSVI_WERROR=ON -DCMAKE_C_FLAGS=-DSVI_NO_MULTIVERSION > /dev/null
cmake --build build-scalar -j "$JOBS" --target svi-bench svi-bench-plugin svi-sample
tests/bench/same_bits.sh build build-scalar

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSVI_WERROR=ON -DSVI_SANITIZE=ON > /dev/null
cmake --build build-asan -j "$JOBS"
(cd build-asan && LSAN_OPTIONS="suppressions=$PWD/../tests/lsan.supp" \
   ctest --output-on-failure -j "$JOBS")
