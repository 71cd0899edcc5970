#include "sim/sim_cli.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "core/log.h"
#include "net/http_server.h"
#include "net/tls.h"
#include "sim/simulator.h"

namespace loopwarden::sim {
namespace {

constexpr const char* kUsage =
    "usage: loopwarden-sim (--scenario FILE | --generate N) [flags]\n"
    "  --scenario FILE        scenario YAML (see README, \"Simulator scenarios\")\n"
    "  --generate N           add a random fleet of N resources (with --accounts A, --seed S, --live-fraction F)\n"
    "  --listen HOST:PORT     listen address (default 127.0.0.1:8080; port 0 picks a free one)\n"
    "  --port-file PATH       write the bound port here once listening\n"
    "  --tls                  serve HTTPS with a self-signed certificate made at start\n"
    "  --ca-out PATH          with --tls: write the certificate (the CA to trust) here\n"
    "  --time-scale N         simulated seconds per real second (default 1)\n"
    "  --epoch T              simulated time at the anchor (RFC 3339; default: the scenario's, else now)\n"
    "  --time-anchor UNIX     real wall-clock second of the epoch (default: now); share it with loopwarden\n"
    "  --log-level LEVEL      debug, info (default), warn, error\n";

struct Flags {
  std::map<std::string, std::string> v;
  bool Has(const std::string& k) const { return v.count(k) > 0; }
  std::string Get(const std::string& k, const std::string& d = "") const {
    auto it = v.find(k);
    return it == v.end() ? d : it->second;
  }
};

}  // namespace

int SimMain(int argc, const char* const* argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--tls") {
      f.v[a] = "true";
      continue;
    }
    static const char* kValued[] = {"--scenario", "--generate", "--accounts", "--seed", "--live-fraction", "--listen",
                                    "--port-file", "--ca-out", "--time-scale", "--epoch", "--time-anchor", "--log-level"};
    bool known = false;
    for (const char* k : kValued) known = known || a == k;
    if (!known || i + 1 >= argc) {
      std::cerr << "loopwarden-sim: " << (known ? "flag " + a + " needs a value" : "unknown flag '" + a + "'") << "\n\n"
                << kUsage;
      return 2;
    }
    f.v[a] = argv[++i];
  }
  if (!f.Has("--scenario") && !f.Has("--generate")) {
    std::cerr << "loopwarden-sim: give --scenario FILE or --generate N\n\n" << kUsage;
    return 2;
  }
  if (f.Has("--log-level")) {
    auto l = ParseLogLevel(f.Get("--log-level"));
    if (!l.ok()) {
      std::cerr << "loopwarden-sim: " << l.status().message() << "\n";
      return 2;
    }
    Log().set_level(*l);
  }
  const Time wall_now = std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  std::optional<Time> epoch_flag;
  if (f.Has("--epoch")) {
    auto e = ParseTime(f.Get("--epoch"));
    if (!e.ok()) {
      std::cerr << "loopwarden-sim: --epoch: " << e.status().message() << "\n";
      return 2;
    }
    epoch_flag = *e;
  }
  Scenario scenario;
  if (f.Has("--scenario")) {
    auto sc = LoadScenarioFile(f.Get("--scenario"), epoch_flag.value_or(wall_now));
    if (!sc.ok()) {
      std::cerr << sc.status().message() << "\n";
      return 78;
    }
    scenario = std::move(*sc);
    if (epoch_flag) scenario.epoch = *epoch_flag;
  } else {
    scenario.epoch = epoch_flag.value_or(wall_now);
    scenario.world.instance_types = DefaultInstanceTypes();
  }
  if (f.Has("--generate")) {
    GenerateOptions g;
    g.resources = std::atoi(f.Get("--generate").c_str());
    g.accounts = std::atoi(f.Get("--accounts", "4").c_str());
    g.seed = std::strtoull(f.Get("--seed", "1").c_str(), nullptr, 10);
    g.live_fraction = std::atof(f.Get("--live-fraction", "0.05").c_str());
    if (g.resources < 0 || g.accounts < 1) {
      std::cerr << "loopwarden-sim: --generate needs N >= 0 and --accounts >= 1\n";
      return 2;
    }
    GenerateFleet(scenario.world, scenario.epoch, g);
  }
  ScaledClockOptions co{.epoch = scenario.epoch, .scale = 1.0};
  if (f.Has("--time-scale")) co.scale = std::atof(f.Get("--time-scale").c_str());
  if (co.scale <= 0) {
    std::cerr << "loopwarden-sim: --time-scale must be positive\n";
    return 2;
  }
  co.anchor = f.Has("--time-anchor") ? FromUnixMicros(static_cast<int64_t>(std::atof(f.Get("--time-anchor").c_str()) * 1e6))
                                     : wall_now;
  ScaledClock clock(co);

  const std::string listen = f.Get("--listen", "127.0.0.1:8080");
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "loopwarden-sim: --listen wants HOST:PORT\n";
    return 2;
  }
  net::ServerOptions so;
  so.host = listen.substr(0, colon);
  so.port = static_cast<uint16_t>(std::atoi(listen.substr(colon + 1).c_str()));
  so.max_connections = 4096;
  so.max_body_bytes = 8 << 20;
  if (f.Has("--tls")) {
    auto id = net::MakeSelfSignedIdentity({so.host, "localhost", "127.0.0.1"});
    if (!id.ok()) {
      std::cerr << "loopwarden-sim: " << id.status().message() << "\n";
      return 1;
    }
    if (f.Has("--ca-out")) {
      std::ofstream out(f.Get("--ca-out"), std::ios::trunc);
      out << id->cert_pem;
      if (!out) {
        std::cerr << "loopwarden-sim: cannot write " << f.Get("--ca-out") << "\n";
        return 1;
      }
    }
    so.tls = std::make_pair(id->cert_pem, id->key_pem);
  }
  Simulator sim(clock, std::move(scenario), [&clock](Duration d) { clock.Jump(d); });
  boost::asio::io_context ioc(1);
  auto server = net::HttpServer::Start(ioc, so, [&](const net::HttpRequest& r) { return sim.Handle(r); });
  if (!server.ok()) {
    std::cerr << "loopwarden-sim: " << server.status().message() << "\n";
    return 1;
  }
  const uint16_t port = (*server)->port();
  if (f.Has("--port-file")) {
    // Written atomically so a waiting test never reads half a number.
    const std::string tmp = f.Get("--port-file") + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::rename(tmp.c_str(), f.Get("--port-file").c_str());
  }
  Log().Info("loopwarden-sim listening",
             {{"address", so.host + ":" + std::to_string(port)}, {"tls", so.tls.has_value()},
              {"resources", static_cast<long long>(sim.world().ResourceCount())}, {"sim_time", clock.Now()},
              {"time_scale", co.scale}});
  boost::asio::signal_set signals(ioc, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code&, int sig) {
    Log().Info("loopwarden-sim stopping", {{"signal", sig}, {"requests", static_cast<long long>(sim.requests())}});
    (*server)->Stop();
    ioc.stop();
  });
  ioc.run();
  return 0;
}

}  // namespace loopwarden::sim
