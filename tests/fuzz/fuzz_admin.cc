// libFuzzer: raw bytes through the admin server's HTTP parser (Beast, with the daemon's
// limits) and, when they make a request, through the admin handlers: routing, query
// parsing, bearer auth and the snooze body's validation, against a real store.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "daemon/admin.h"
#include "net/http_server.h"

using namespace loopwarden;

namespace {

struct World {
  World() : clock(FromUnixMicros(1'780'000'000'000'000)) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("lw-fuzz-admin-" + std::to_string(getpid()) + ".db")).string();
    std::filesystem::remove(path);
    // The World is never destroyed (libFuzzer exits from anywhere), so the database and its
    // companions go at exit instead of piling up in the temp directory run after run.
    static std::string at_exit_path = path;
    std::atexit([] {
      for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
        std::error_code ec;
        std::filesystem::remove(at_exit_path + suffix, ec);
      }
    });
    store = std::move(*store::Store::Open({.path = path}));
    ListedResource r;
    r.provider = "bt";
    r.account = "bt";
    r.kind = Kind::kBasetenRun;
    r.id = "r1";
    r.lifecycle = Lifecycle::kRunning;
    store::Snapshot snap{.provider = "bt", .account = "bt", .complete = true, .resources = {r}};
    (void)store->Ingest(std::span<const store::Snapshot>(&snap, 1), clock.Now(), {});
    ctx.metrics = &metrics;
    ctx.store = store.get();
    ctx.clock = &clock;
    ctx.plan_json = [] { return std::string("{\"decisions\":[]}"); };
    ctx.admin_token = [] { return std::string("fuzz-token"); };
    ctx.healthy = [] { return std::make_pair(true, std::string()); };
    ctx.ready = [] { return std::make_pair(true, std::string()); };
  }
  ManualClock clock;
  std::unique_ptr<store::Store> store;
  exporters::Metrics metrics;
  daemon::AdminContext ctx;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* w = new World();
  net::ParsedRequest p = net::ParseHttpRequest(std::string_view(reinterpret_cast<const char*>(data), size), 16 * 1024, 64 * 1024);
  if (!p.request) {
    if (p.status != 400 && p.status != 413 && p.status != 431) __builtin_trap();
    return 0;
  }
  net::HttpResponse r = daemon::HandleAdmin(w->ctx, *p.request);
  if (r.status < 200 || r.status > 599) __builtin_trap();
  return 0;
}
