// Validates every object of the multi-document YAML files given against the Kubernetes
// (kubernetes-models) and Prometheus Operator (@kubernetes-models/prometheus-operator)
// OpenAPI schemas. An object of a kind with no schema here is an error, not a pass.
// Usage: node validate.mjs FILE...
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const modules = {
  v1: (k) => `kubernetes-models/v1/${k}`,
  "apps/v1": (k) => `kubernetes-models/apps/v1/${k}`,
  "monitoring.coreos.com/v1": (k) => `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${k}`,
};

let failures = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length) {
      console.log(`FAIL: ${file}: ${doc.errors[0].message}`);
      failures++;
      continue;
    }
    const obj = doc.toJS();
    if (obj == null) continue;
    const where = `${file}: ${obj.apiVersion}/${obj.kind} ${obj.metadata?.name}`;
    const path = modules[obj.apiVersion]?.(obj.kind);
    if (!path) {
      console.log(`FAIL: ${where}: no schema for this apiVersion`);
      failures++;
      continue;
    }
    let Model;
    try {
      Model = (await import(path))[obj.kind];
    } catch (e) {
      console.log(`FAIL: ${where}: no schema for this kind (${e.message})`);
      failures++;
      continue;
    }
    try {
      new Model(obj).validate();
      checked++;
    } catch (e) {
      console.log(`FAIL: ${where}: ${e.message}`);
      failures++;
    }
  }
}
console.log(`${checked} objects valid, ${failures} failures`);
process.exit(failures === 0 && checked > 0 ? 0 : 1);
