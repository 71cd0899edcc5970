#include <ostream>

#include "config/config.h"
#include "core/version.h"
#include "daemon/commands.h"
#include "policies/loader.h"

namespace loopwarden::cli {

int CmdCheck(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.Has("--schema")) {
    out << config::ConfigJsonSchema() << "\n";
    return kExitOk;
  }
  const std::string path = ConfigPath(args);
  Result<config::Config> cfg = config::LoadConfig(path);
  if (!cfg.ok()) {
    // Every error on its own line, then the summary amtool-style.
    const std::string& msg = cfg.status().message();
    size_t lines = 1;
    for (char c : msg) lines += c == '\n';
    err << msg << "\n";
    out << "Checking '" << path << "'  FAILED: " << lines << (lines == 1 ? " error" : " errors") << "\n";
    return kExitConfig;
  }
  out << "Checking '" << path << "'  SUCCESS: " << cfg->providers.size() << " providers, " << cfg->notifiers.size()
      << " notifiers, " << cfg->policy_set.policies.size() << " policies, " << cfg->policy_set.exemptions.size()
      << " exemptions" << (cfg->dry_run ? " (dry_run: nothing will change)" : " (dry_run: false — acts for real)")
      << "\n";
  if (args.Has("--explain")) out << "\n" << policies::Explain(cfg->policy_set, cfg->dry_run);
  return kExitOk;
}

int CmdVersion(const Args&, std::ostream& out, std::ostream&) {
  out << "loopwarden " << kVersion << " (revision " << kRevision << ", " << kCompiler << ")\n";
  return kExitOk;
}

}  // namespace loopwarden::cli
