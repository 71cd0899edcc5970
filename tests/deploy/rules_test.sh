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
