#!/usr/bin/env bash
# Installs whatever is missing, builds everything with warnings as errors, runs every
# test, then repeats the tests under AddressSanitizer + UndefinedBehaviorSanitizer.
# This is the command CI runs (.ci/run) on a clean clone: 2 cores, 90 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

bash scripts/install-deps.sh --test

echo "== build (RelWithDebInfo, -Werror)"
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOPWARDEN_WERROR=ON >/dev/null
cmake --build build/ci -j"$jobs"

echo "== tests"
(cd build/ci && ctest --output-on-failure -j"$jobs" --timeout 600)

echo "== sanitizer build (ASan + UBSan)"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLOOPWARDEN_SANITIZE=ON -DLOOPWARDEN_WERROR=ON >/dev/null
cmake --build build/asan -j"$jobs"
echo "== tests under sanitizers"
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs" --timeout 900)
echo "== all tests passed (build/ci and build/asan), from $root"
