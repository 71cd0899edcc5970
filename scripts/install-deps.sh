#!/usr/bin/env bash
# Installs what loopwarden needs from Debian 12 packages, and nothing else.
#   scripts/install-deps.sh          build dependencies
#   scripts/install-deps.sh --test   plus the tools the test command uses
# Idempotent and silent when everything is already there.
set -euo pipefail

build_pkgs=(cmake ninja-build g++ pkg-config libboost1.81-dev libboost-json1.81-dev
  libboost-url1.81-dev libssl-dev libsqlite3-dev libyaml-cpp-dev prometheus-cpp-dev
  doctest-dev libre2-dev)
# promtool + the Prometheus server (scrape test), clang-14 and its runtime (fuzzers),
# systemd-analyze (unit checks), sqlite3 (inspecting databases in tests),
# kubectl (kustomize rendering of deploy/kubernetes), curl.
test_pkgs=(prometheus clang-14 libclang-rt-14-dev systemd sqlite3 curl kubectl)

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then want+=("${test_pkgs[@]}"); fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${want[@]}"; do installed "$p" || missing+=("$p"); done
# Debian's default Boost (1.74) conflicts with 1.81's headers and CMake configs.
conflicting=()
for p in libboost-dev libboost1.74-dev; do installed "$p" && conflicting+=("$p"); done

if [[ ${#missing[@]} -eq 0 && ${#conflicting[@]} -eq 0 ]]; then exit 0; fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]:-nothing}${conflicting:+; removing ${conflicting[*]}}" >&2
if [[ ${#conflicting[@]} -gt 0 ]]; then
  $SUDO apt-get remove -y -qq "${conflicting[@]}" >/dev/null
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  # kubectl is optional: some mirrors do not carry it, and its tests skip with a reason.
  required=(); optional=()
  for p in "${missing[@]}"; do
    if [[ "$p" == kubectl ]]; then optional+=("$p"); else required+=("$p"); fi
  done
  $SUDO apt-get update -qq >/dev/null
  if [[ ${#required[@]} -gt 0 ]]; then
    $SUDO apt-get install -y -qq --no-install-recommends "${required[@]}" >/dev/null
  fi
  for p in "${optional[@]}"; do
    $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
      echo "install-deps: optional package $p is not available; its checks will be skipped" >&2
  done
fi
