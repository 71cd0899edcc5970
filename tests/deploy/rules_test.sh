#!/usr/bin/env bash
# The Prometheus alert rules: `promtool check rules` and the `promtool test rules` unit
# tests. Exit 77 (skipped) without promtool.
set -euo pipefail
root=$1
if ! command -v promtool >/dev/null; then
  echo "SKIP: promtool is not installed (scripts/install-deps.sh --test installs prometheus)"
  exit 77
fi
cd "$root/deploy/prometheus"
promtool check rules loopwarden.rules.yml
promtool test rules loopwarden.rules.test.yml
# Every alert links its own section of RUNBOOK.md, and the section exists.
fail=0
for a in $(sed -nE 's/^ *- alert: ([A-Za-z]+)$/\1/p' loopwarden.rules.yml); do
  anchor=$(tr '[:upper:]' '[:lower:]' <<<"$a")
  grep -q "runbook_url: \".*/deploy/prometheus/RUNBOOK.md#$anchor\"" loopwarden.rules.yml ||
    { echo "FAIL: $a has no runbook_url to RUNBOOK.md#$anchor"; fail=1; }
  grep -q "^## $a\$" RUNBOOK.md || { echo "FAIL: RUNBOOK.md has no section for $a"; fail=1; }
done
[[ $(grep -c 'runbook_url:' loopwarden.rules.yml) -eq $(grep -c '^ *- alert:' loopwarden.rules.yml) ]] ||
  { echo "FAIL: an alert has no runbook_url, or one has two"; fail=1; }
exit $fail
