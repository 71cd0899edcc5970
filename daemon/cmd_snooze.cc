// `loopwarden snooze RESOURCE --for 2h --reason TEXT`: an audited exemption, added
// through the running daemon's POST /v1/snooze so it takes effect at once.
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cstdlib>
#include <ostream>

#include "config/config.h"
#include "core/json.h"
#include "daemon/commands.h"
#include "net/http_client.h"

namespace loopwarden::cli {

namespace {

namespace bj = boost::json;

boost::asio::awaitable<void> Post(net::HttpClient* client, net::HttpRequest req, Result<net::HttpResponse>* out) {
  *out = co_await client->Send(std::move(req));
}

}  // namespace

int CmdSnooze(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.positional.size() != 1) {
    err << "loopwarden: snooze needs exactly one RESOURCE (a key from /v1/resources, or a provider id)\n";
    return kExitUsage;
  }
  if (!args.Has("--for") || !args.Has("--reason")) {
    err << "loopwarden: snooze needs --for DURATION and --reason TEXT\n";
    return kExitUsage;
  }
  auto cfg = config::LoadConfig(ConfigPath(args));
  if (!cfg.ok()) {
    err << cfg.status().message() << "\n";
    return kExitConfig;
  }
  if (cfg->admin_token.value.empty()) {
    err << "loopwarden: the configuration has no admin_token_env / admin_token_file, so the daemon accepts no snoozes\n";
    return kExitConfig;
  }
  const std::string address = args.Get("--address", cfg->listen);
  auto hp = config::ParseListen(address);
  if (!hp.ok()) {
    err << "loopwarden: --address: " << hp.status().message() << "\n";
    return kExitUsage;
  }
  std::string host = hp->first.empty() || hp->first == "0.0.0.0" ? "127.0.0.1" : hp->first;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  std::string by = args.Get("--by");
  if (by.empty()) {
    const char* user = std::getenv("USER");
    by = user && *user ? user : "cli";
  }
  bj::object body{{"resource", args.positional[0]}, {"for", args.Get("--for")}, {"reason", args.Get("--reason")},
                  {"by", by}};
  if (args.Has("--policy")) body["policy"] = args.Get("--policy");
  net::HttpRequest req;
  req.method = "POST";
  req.url = "http://" + host + ":" + std::to_string(hp->second) + "/v1/snooze";
  req.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + cfg->admin_token.value}};
  req.body = bj::serialize(body);
  req.idempotent = false;

  boost::asio::io_context ioc(1);
  auto client = net::HttpClient::Create(ioc, {.connect_timeout = std::chrono::seconds(5), .io_timeout = std::chrono::seconds(10)});
  if (!client.ok()) {
    err << "loopwarden: " << client.status().message() << "\n";
    return kExitFailure;
  }
  Result<net::HttpResponse> resp = Unavailable("no answer");
  boost::asio::co_spawn(ioc, Post(client->get(), std::move(req), &resp), [](std::exception_ptr) {});
  ioc.run();
  if (!resp.ok()) {
    err << "loopwarden: no loopwarden daemon answered at " << address << ": " << resp.status().message() << "\n";
    return kExitFailure;
  }
  boost::system::error_code ec;
  bj::value v = bj::parse(resp->body, ec);
  const bj::object* o = !ec && v.is_object() ? &v.as_object() : nullptr;
  if (resp->status != 201) {
    std::string why = o ? json::Str(*o, "error").value_or(resp->body) : resp->body;
    if (resp->status == 401) why = "the daemon refused the admin token (" + why + ")";
    err << "loopwarden: snooze failed: " << resp->status << " " << why << "\n";
    return kExitFailure;
  }
  out << "snoozed " << args.positional[0] << " until " << (o ? json::Str(*o, "until").value_or("?") : "?")
      << (args.Has("--policy") ? " for policy " + args.Get("--policy") : std::string(" for every policy")) << "\n";
  return kExitOk;
}

}  // namespace loopwarden::cli
