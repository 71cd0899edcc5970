#!/usr/bin/env bash
# The main job on an embedded default: build, then show loopwarden's version and
# validate the example configuration (with placeholder credentials).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOPWARDEN_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target loopwarden
bin=build/release/daemon/loopwarden
$bin version
export BASETEN_API_KEY=demo-baseten-key FIREWORKS_API_KEY=demo-fireworks-key \
  SLACK_WEBHOOK_URL=https://hooks.slack.com/services/TDEMO/BDEMO/demo HOOK_SECRET=whsec_ZGVtby1zZWNyZXQtZGVtby1zZWNyZXQ= \
  LOOPWARDEN_ADMIN_TOKEN=demo-admin-token
$bin check --config examples/loopwarden.yaml --explain
