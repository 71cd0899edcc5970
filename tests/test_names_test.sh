#!/usr/bin/env bash
# ctest splits registered names at ';', so a test case with one in its name silently
# runs nothing (doctest matches no case). Fails on any such name.
set -euo pipefail
root=$1
if hits=$(grep -rnE 'TEST_CASE\("[^"]*;' "$root/tests" --include='*.cc' --include='*.h'); then
  echo "test case names with ';' (ctest would run none of them):"
  echo "$hits"
  exit 1
fi
echo "no test case name contains ';'"
