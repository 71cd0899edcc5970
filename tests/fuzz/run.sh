#!/usr/bin/env bash
# Runs every fuzzer for SECONDS from its checked-in corpus (new inputs go to a scratch
# copy, not the repository), after replaying the regression inputs of crashes found
# before. Prints the inputs tried per target. Usage: run.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=$1 seconds=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
total=0
for t in config baseten fireworks admin; do
  bin=$build/tests/fuzz/fuzz_$t
  [[ -x $bin ]] || { echo "FAIL: $bin was not built"; exit 1; }
  if compgen -G "$here/regressions/$t/*" >/dev/null; then
    "$bin" -runs=1 "$here"/regressions/$t/* >"$scratch/$t.regress.log" 2>&1 || { cat "$scratch/$t.regress.log"; exit 1; }
  fi
  mkdir -p "$scratch/$t"
  cp "$here/corpus/$t/"* "$scratch/$t/"
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$scratch/$t-" "$scratch/$t" >"$scratch/$t.log" 2>&1; then
    tail -60 "$scratch/$t.log"
    for a in "$scratch/$t"-crash-* "$scratch/$t"-timeout-* "$scratch/$t"-oom-*; do
      [[ -e $a ]] && { mkdir -p "$here/regressions/$t"; cp "$a" "$here/regressions/$t/"; echo "kept $a in tests/fuzz/regressions/$t/"; }
    done
    echo "FAIL: fuzz_$t found a crash"
    exit 1
  fi
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$scratch/$t.log" | tail -1)
  echo "fuzz_$t: ${runs:-0} inputs in ${seconds}s, no crash"
  total=$((total + ${runs:-0}))
done
echo "fuzzers: $total inputs tried, no crash"
