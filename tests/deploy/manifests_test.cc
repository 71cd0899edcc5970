// The Kubernetes manifests, checked offline for what a cluster would reject or what
// would make loopwarden misbehave there: every file parses, kustomizations name files
// that exist, pods are locked down (non-root, read-only root, no capabilities, seccomp),
// probes hit /healthz and /readyz on the admin port, the sidecar is a native one, the
// database sits on a writable volume, Prometheus annotations point at /metrics, and
// the shipped configuration loads.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>

#include "config/config.h"

namespace loopwarden::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kK8s = "deploy/kubernetes";

std::vector<YAML::Node> LoadAll(const fs::path& p) {
  std::vector<YAML::Node> docs;
  REQUIRE_NOTHROW(docs = YAML::LoadAllFromFile(p.string()));
  return docs;
}

void CheckContainerSecurity(const YAML::Node& c, const std::string& where) {
  INFO(where);
  const YAML::Node sc = c["securityContext"];
  REQUIRE(sc);
  CHECK(sc["allowPrivilegeEscalation"].as<bool>() == false);
  CHECK(sc["readOnlyRootFilesystem"].as<bool>() == true);
  CHECK(sc["runAsNonRoot"].as<bool>() == true);
  REQUIRE(sc["capabilities"]["drop"]);
  CHECK(sc["capabilities"]["drop"][0].as<std::string>() == "ALL");
  CHECK(sc["seccompProfile"]["type"].as<std::string>() == "RuntimeDefault");
}

void CheckLoopwardenContainer(const YAML::Node& c, const YAML::Node& pod, const std::string& where) {
  INFO(where);
  CheckContainerSecurity(c, where);
  CHECK(c["image"].as<std::string>().find("loopwarden") != std::string::npos);
  REQUIRE(c["ports"]);
  CHECK(c["ports"][0]["containerPort"].as<int>() == 8464);
  CHECK(c["livenessProbe"]["httpGet"]["path"].as<std::string>() == "/healthz");
  CHECK(c["readinessProbe"]["httpGet"]["path"].as<std::string>() == "/readyz");
  // Every mount names a volume; the database directory is a writable one (where the
  // state is a file: the HA variant keeps it in PostgreSQL).
  std::set<std::string> volumes;
  for (const auto& v : pod["volumes"]) volumes.insert(v["name"].as<std::string>());
  bool state = false;
  for (const auto& m : c["volumeMounts"]) {
    CHECK(volumes.count(m["name"].as<std::string>()) == 1);
    if (m["mountPath"].as<std::string>() == "/var/lib/loopwarden") {
      state = true;
      CHECK(!(m["readOnly"] && m["readOnly"].as<bool>()));
    }
  }
  CHECK(state == (where != "ha"));
}

void CheckPodTemplate(const YAML::Node& tpl, bool sidecar, const std::string& where) {
  INFO(where);
  const YAML::Node ann = tpl["metadata"]["annotations"];
  CHECK(ann["prometheus.io/scrape"].as<std::string>() == "true");
  CHECK(ann["prometheus.io/port"].as<std::string>() == "8464");
  CHECK(ann["prometheus.io/path"].as<std::string>() == "/metrics");
  const YAML::Node pod = tpl["spec"];
  CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
  CHECK(pod["automountServiceAccountToken"].as<bool>() == false);
  int found = 0;
  if (sidecar) {
    for (const auto& c : pod["initContainers"]) {
      if (c["name"].as<std::string>() != "loopwarden") continue;
      ++found;
      CHECK(c["restartPolicy"].as<std::string>() == "Always");  // a native sidecar
      CheckLoopwardenContainer(c, pod, where + " sidecar");
    }
    for (const auto& c : pod["containers"]) CheckContainerSecurity(c, where + " workload");
  } else {
    for (const auto& c : pod["containers"]) {
      if (c["name"].as<std::string>() != "loopwarden") continue;
      ++found;
      CheckLoopwardenContainer(c, pod, where);
    }
  }
  CHECK(found == 1);
}

TEST_CASE("kubernetes: every manifest parses and every kustomization names files that exist") {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kK8s)) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    const auto docs = LoadAll(e.path());
    CHECK(!docs.empty());
    if (e.path().filename() != "kustomization.yaml") continue;
    const YAML::Node k = docs.at(0);
    CHECK(k["kind"].as<std::string>() == "Kustomization");
    for (const auto& r : k["resources"]) {
      INFO(e.path() << " -> " << r.as<std::string>());
      CHECK(fs::exists(e.path().parent_path() / r.as<std::string>()));
    }
    for (const auto& g : k["configMapGenerator"]) {
      for (const auto& f : g["files"]) CHECK(fs::exists(e.path().parent_path() / f.as<std::string>()));
    }
  }
  CHECK(files >= 8);
}

TEST_CASE("kubernetes: apply -k never ships a Secret, and only the pod is annotated for scraping") {
  // `kubectl apply -k` of a placeholder Secret would overwrite the real keys.
  for (const auto& e : fs::recursive_directory_iterator(kK8s)) {
    if (e.path().filename() != "kustomization.yaml") continue;
    for (const auto& r : LoadAll(e.path()).at(0)["resources"]) {
      const fs::path file = e.path().parent_path() / r.as<std::string>();
      if (fs::is_directory(file)) continue;
      for (const auto& doc : LoadAll(file)) {
        INFO(file);
        CHECK(doc["kind"].as<std::string>() != "Secret");
      }
    }
    CHECK_FALSE(LoadAll(e.path()).at(0)["secretGenerator"]);
  }
  // Annotating the Service too makes annotation-based discovery scrape the pod twice.
  for (const char* f : {"standalone/service.yaml", "ha/service.yaml"}) {
    const auto svc = LoadAll(kK8s / f).at(0);
    INFO(f);
    const bool annotated = svc["metadata"]["annotations"] && svc["metadata"]["annotations"]["prometheus.io/scrape"];
    CHECK_FALSE(annotated);
  }
}

TEST_CASE("kubernetes: the sidecar and standalone pods are locked down, probed and scraped") {
  const auto sidecar = LoadAll(kK8s / "base/deployment.yaml").at(0);
  CHECK(sidecar["kind"].as<std::string>() == "Deployment");
  CheckPodTemplate(sidecar["spec"]["template"], true, "base");

  const auto standalone = LoadAll(kK8s / "standalone/deployment.yaml").at(0);
  CHECK(standalone["spec"]["replicas"].as<int>() == 1);  // two replicas would both act
  CHECK(standalone["spec"]["strategy"]["type"].as<std::string>() == "Recreate");
  CheckPodTemplate(standalone["spec"]["template"], false, "standalone");
  bool pvc = false;
  for (const auto& v : standalone["spec"]["template"]["spec"]["volumes"]) {
    pvc = pvc || (v["name"].as<std::string>() == "state" && v["persistentVolumeClaim"]);
  }
  CHECK(pvc);
}

TEST_CASE("kubernetes: the HA variant runs two replicas on PostgreSQL, rolls without a gap and keeps its password in the Secret") {
  const auto ha = LoadAll(kK8s / "ha/deployment.yaml").at(0);
  CHECK(ha["spec"]["replicas"].as<int>() == 2);
  CHECK(ha["spec"]["strategy"]["type"].as<std::string>() == "RollingUpdate");
  CHECK(ha["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>() == 0);
  CheckPodTemplate(ha["spec"]["template"], false, "ha");
  for (const auto& v : ha["spec"]["template"]["spec"]["volumes"]) CHECK_FALSE(v["persistentVolumeClaim"]);
  bool password = false;
  for (const auto& e : ha["spec"]["template"]["spec"]["containers"][0]["env"]) {
    password = password || (e["name"].as<std::string>() == "PGPASSWORD" &&
                            e["valueFrom"]["secretKeyRef"]["key"].as<std::string>() == "postgres-password");
  }
  CHECK(password);
  CHECK(LoadAll(kK8s / "config/secret.example.yaml").at(0)["stringData"]["postgres-password"]);
  config::LoadOptions lo;
  lo.resolve_secrets = false;
  auto cfg = config::LoadConfig((kK8s / "ha/loopwarden.yaml").string(), lo);
  REQUIRE_MESSAGE(cfg.ok(), cfg.status().message());
  CHECK(cfg->dry_run);
  CHECK(cfg->listen == "0.0.0.0:8464");
  CHECK(cfg->state_path.rfind("postgresql://", 0) == 0);
  CHECK(cfg->state_path.find(':', 13) > cfg->state_path.find('@'));  // no password in the DSN
}

TEST_CASE("kubernetes: the shipped configuration loads, listens where the probes look and keeps state on the volume") {
  config::LoadOptions lo;
  lo.resolve_secrets = false;
  auto cfg = config::LoadConfig((kK8s / "config/loopwarden.yaml").string(), lo);
  REQUIRE_MESSAGE(cfg.ok(), cfg.status().message());
  CHECK(cfg->dry_run);  // inert until the operator says otherwise
  CHECK(cfg->listen == "0.0.0.0:8464");
  CHECK(cfg->state_path.rfind("/var/lib/loopwarden/", 0) == 0);
  // The secret files it reads are keys of the Secret, mounted at /etc/loopwarden/secrets.
  const auto secret = LoadAll(kK8s / "config/secret.example.yaml").at(0);
  for (const std::string key : {"baseten-api-key", "slack-webhook-url", "admin-token"}) {
    CHECK(secret["stringData"][key]);
  }
}

TEST_CASE("systemd: the installed configuration loads and the unit names what it needs") {
  config::LoadOptions lo;
  lo.resolve_secrets = false;
  lo.env = [](const std::string& k) -> std::optional<std::string> {
    if (k == "CREDENTIALS_DIRECTORY") return std::string("/run/credentials/loopwarden.service");
    if (k == "STATE_DIRECTORY") return std::string("/var/lib/loopwarden");
    return std::nullopt;
  };
  auto cfg = config::LoadConfig("deploy/systemd/loopwarden.yaml", lo);
  REQUIRE_MESSAGE(cfg.ok(), cfg.status().message());
  CHECK(cfg->dry_run);
  std::ifstream in("deploy/systemd/loopwarden.service");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string unit = ss.str();
  for (const char* d : {"Type=notify\n", "WatchdogSec=", "Restart=on-failure\n", "RestartPreventExitStatus=78\n",
                        "DynamicUser=yes\n", "StateDirectory=loopwarden\n", "LoadCredential=baseten:",
                        "ExecReload=/bin/kill -HUP $MAINPID\n"}) {
    CHECK_MESSAGE(unit.find(d) != std::string::npos, d);
  }
}

}  // namespace
}  // namespace loopwarden::testing
