#!/usr/bin/env bash
# Renders both kustomize variants offline. Schema validation against a cluster's
# OpenAPI cannot be done offline (no kubeconform in Debian); deploy_test checks the
# structure. Exit 77 (skipped) without kubectl.
set -euo pipefail
root=$1
if ! command -v kubectl >/dev/null; then
  echo "SKIP: kubectl is not installed; deploy_test still checks the manifests' structure"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for v in base standalone; do
  kubectl kustomize "$root/deploy/kubernetes/$v" >"$out/$v.yaml"
  # The generated ConfigMap's hashed name is what the pod mounts.
  cm=$(sed -nE 's/^  name: (loopwarden-config-[a-z0-9]+)$/\1/p' "$out/$v.yaml" | head -1)
  [[ -n $cm ]] || { echo "FAIL: $v: no generated loopwarden-config ConfigMap"; exit 1; }
  grep -q "name: $cm" <(grep -A2 'configMap:' "$out/$v.yaml") || { echo "FAIL: $v: pod does not mount $cm"; exit 1; }
  echo "OK: $v renders ($(grep -c '^kind:' "$out/$v.yaml") objects, config $cm)"
done
