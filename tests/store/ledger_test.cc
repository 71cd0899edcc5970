// Each ledger meter with exact micro-USD figures.
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "core/log.h"
#include "tests/store/fixtures.h"
#include "tests/testing/temp_dir.h"

using namespace loopwarden;
using namespace loopwarden::testing;
using namespace std::chrono_literals;

namespace {
int64_t Micros(const char* usd) { return ParseMoney(usd).value().micros(); }
}  // namespace

TEST_CASE("GPU time: replicas x GPUs x seconds x price, closed when billing stops") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource r = Run("g8");  // 8 H100 at $6.50
  r.activity.busy_now = true;
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  const auto* st = (*s)->Find("bt/baseten.run/g8");
  CHECK(st->BurnPerHour().micros() == Micros("52.00"));
  CHECK(st->SpendAt(kT0 + 30min).micros() == Micros("26.00"));
  r.activity.busy_now = true;
  r.billing.billable = false;
  r.lifecycle = Lifecycle::kStopped;
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 90min, Prices()).ok());
  CHECK(st->SpendAt(kT0 + 5h).micros() == Micros("78.00"));
  CHECK(st->BurnPerHour().micros() == 0);

  // 2 replicas x 4 GPUs at the provider's own price ($7.00): the provider's wins.
  ListedResource h = Run("h200");
  h.billing.gpu_type = "H200";
  h.billing.gpus_per_replica = 4;
  h.billing.replicas = 2;
  h.billing.price_per_gpu_hour = ParseMoney("7.00").value();
  h.activity.busy_now = true;
  snap = Snap({r, h});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 2h, Prices()).ok());
  h.billing.replicas = 1;  // scaled down: the interval splits
  snap = Snap({r, h});
  auto split = (*s)->Ingest({&snap, 1}, kT0 + 2h + 15min, Prices());
  CHECK(split->ledger_rows == 2);  // one closed, one opened
  const auto* hs = (*s)->Find("bt/baseten.run/h200");
  CHECK(hs->SpendAt(kT0 + 2h + 15min).micros() == Micros("14.00"));  // 8 GPUs x 15 min x $7
  CHECK(hs->SpendAt(kT0 + 3h + 15min).micros() == Micros("42.00"));  // + 4 GPUs x 1 h x $7
  // An unpriced GPU type accrues quantity at price 0 rather than guessing.
  ListedResource u = Run("unpriced");
  u.billing.gpu_type = "GB300";
  snap = Snap({r, h, u});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 4h, Prices()).ok());
  CHECK((*s)->Find("bt/baseten.run/unpriced")->open_gpu->unit_price.micros() == 0);
}

TEST_CASE("idle time is billed and flagged idle from idle_after past the last activity") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource r = Run("idle");
  r.activity.busy_now = true;
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  r.activity.busy_now = false;
  r.activity.last_active_at = kT0 + 10min;
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 12min, Prices()).ok());  // not yet idle_after (15 min)
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 40min, Prices()).ok());  // idle since 10m: split at 25m
  r.billing.billable = false;
  r.lifecycle = Lifecycle::kStopped;
  snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 60min, Prices()).ok());
  const auto* st = (*s)->Find("bt/baseten.run/idle");
  // [0, 25m) active: 52 x 25/60 = 21.666667; [25m, 60m) idle: 52 x 35/60 = 30.333333.
  CHECK(st->SpendAt(kT0 + 2h).micros() == 52'000'000);
  CHECK(st->IdleSpendAt(kT0 + 2h).micros() == 30'333'333);
  auto report = (*s)->QueryReport(kT0 - 1h, kT0 + 2h, store::GroupBy::kKind);
  REQUIRE(report.ok());
  REQUIRE(report->rows.size() == 1);
  CHECK(report->rows[0].group == "baseten.run");
  CHECK(report->rows[0].spend.micros() == 52'000'000);
  CHECK(report->rows[0].idle_spend.micros() == 30'333'333);
}

TEST_CASE("tokens: per-meter deltas at their own rates, cached prefill cheaper") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource x = Session("ts-1");
  x.tokens = {{"prefill", 1'000'000}, {"cached_prefill", 500'000}, {"sample", 200'000}, {"train", 3'924'000}};
  store::Snapshot snap{.provider = "fw", .account = "acme", .complete = true, .resources = {x}};
  auto first = (*s)->Ingest({&snap, 1}, kT0, Prices());
  CHECK(first->ledger_rows == 4);
  const auto* st = (*s)->Find("fw/fireworks.training_session/ts-1");
  // 1.86 + 0.5 x 0.372 + 0.2 x 5.595 + 3.924 x 4.103
  CHECK(st->SpendAt(kT0).micros() == 1'860'000 + 186'000 + 1'119'000 + 16'100'172);
  x.tokens["train"] = 4'000'000;
  snap.resources = {x};
  auto next = (*s)->Ingest({&snap, 1}, kT0 + 5min, Prices());
  CHECK(next->ledger_rows == 1);
  CHECK(next->counter_rows == 1);
  CHECK(st->SpendAt(kT0 + 5min).micros() == 19'265'172 + 311'828);
  auto spend = (*s)->Spend({.provider = "fw"}, kT0 + 1min, kT0 + 10min);
  CHECK(spend->micros() == 311'828);
  // A provider total that went down (its usage window moved on) re-bases, never refunds.
  x.tokens["train"] = 100;
  snap.resources = {x};
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 10min, Prices()).ok());
  CHECK(st->SpendAt(kT0 + 10min).micros() == 19'577'000);
}

TEST_CASE("tokens spent before first sight are spread since creation, not booked into today's budget") {
  // Issue 15: history booked at first sight landed in today's budget.
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource x = Session("ts-old");
  x.created_at = kT0 - 72h;              // three days before loopwarden first saw it
  x.tokens = {{"train", 30'000'000}};    // 30M x $4.103 = $123.09
  store::Snapshot snap{.provider = "fw", .account = "acme", .complete = true, .resources = {x}};
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  CHECK((*s)->Find("fw/fireworks.training_session/ts-old")->SpendAt(kT0).micros() == 123'090'000);
  // Today (the last 24 h) holds a third of it; the three days hold all of it.
  CHECK((*s)->Spend({.provider = "fw"}, kT0 - 24h, kT0 + 1min)->micros() == 41'030'000);
  CHECK((*s)->Spend({.provider = "fw"}, kT0 - 72h, kT0 + 1min)->micros() == 123'090'000);
  auto report = (*s)->QueryReport(kT0 - 48h, kT0 + 1min, store::GroupBy::kProvider);
  CHECK(report->total.spend.micros() == 82'060'000);
  // What it spends after first sight is booked when it is seen, a meter that appears
  // only now included: 1M more train tokens ($4.103) and 1M sample tokens ($5.595).
  x.tokens["train"] = 31'000'000;
  x.tokens["sample"] = 1'000'000;
  snap.resources = {x};
  REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 1h, Prices()).ok());
  CHECK((*s)->Spend({.provider = "fw"}, kT0 + 30min, kT0 + 2h)->micros() == 4'103'000 + 5'595'000);
}

TEST_CASE("spend in a period prorates open and closed GPU intervals") {
  TempDir dir;
  auto s = store::Store::Open({.path = dir.File("lw.db")});
  REQUIRE(s.ok());
  ListedResource r = Run("p");
  r.activity.busy_now = true;
  auto snap = Snap({r});
  REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
  // Half an hour of an hour-long open interval: $26.
  CHECK((*s)->Spend({}, kT0 + 30min, kT0 + 60min)->micros() == 26'000'000);
  CHECK((*s)->Spend({.provider = "other"}, kT0, kT0 + 60min)->micros() == 0);
  CHECK((*s)->Spend({.kind = Kind::kBasetenRun}, kT0 - 1h, kT0 + 15min)->micros() == 13'000'000);
}

TEST_CASE("a report read long after the last poll counts running GPU time only up to that poll") {
  TempDir dir;
  const std::string path = dir.File("lw.db");
  ListedResource r = Run("g8");  // 8 H100 at $6.50: $52 an hour
  r.activity.busy_now = true;
  {
    auto s = store::Store::Open({.path = path});
    REQUIRE(s.ok());
    auto snap = Snap({r});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, Prices()).ok());
    REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 1h, Prices()).ok());  // still billing at the last poll
  }
  // The daemon stopped; a day later someone runs `loopwarden report`.
  auto s = store::Store::Open({.path = path, .read_only = true});
  REQUIRE(s.ok());
  auto rep = (*s)->QueryReport(kT0 - 1h, kT0 + 25h, store::GroupBy::kProvider);
  REQUIRE(rep.ok());
  CHECK(rep->total.spend.micros() == Micros("52.00"));  // not 25 x $52 = $1,300
  REQUIRE(rep->open_counted_until.has_value());
  CHECK(*rep->open_counted_until == kT0 + 1h);
  // Inside the daemon, budgets keep counting an open interval until a poll closes it.
  const Time starts[] = {kT0 - 1h};
  auto cells = (*s)->SpendSince(starts, kT0 + 2h);
  REQUIRE(cells.ok());
  REQUIRE(cells->size() == 1);
  CHECK(cells->front().since[0].micros() == Micros("104.00"));
  // A report while polls are current carries no note.
  auto now_rep = (*s)->QueryReport(kT0 - 1h, kT0 + 1h, store::GroupBy::kProvider);
  REQUIRE(now_rep.ok());
  CHECK_FALSE(now_rep->open_counted_until.has_value());
  CHECK(now_rep->total.spend.micros() == Micros("52.00"));
}

TEST_CASE("prices: the provider's own, then the configured, then its provider's list price, and none known is unpriced") {
  // Issue 15: token and GPU spend was USD 0 on a configuration that named no prices.
  TempDir dir;
  const std::string db = dir.File("lw.db");
  store::PriceBook p = Prices();  // configured: H100 6.50
  p.list_gpu_hour[ProviderType::kBaseten] = {{"H100", ParseMoney("9.99").value()}, {"A100", ParseMoney("4.00").value()}};
  p.list_gpu_hour[ProviderType::kFireworks] = {{"H200", ParseMoney("7.00").value()}};
  p.list_tokens_per_million[ProviderType::kFireworks]["accounts/fireworks/models/muse-glimmer-30b"] = {
      {"train", ParseMoney("5.86").value()}};
  ListedResource configured = Run("h100");  // configured 6.50 beats the list's 9.99
  ListedResource listed = Run("a100");
  listed.billing.gpu_type = "A100";
  ListedResource own = Run("own");
  own.billing.price_per_gpu_hour = ParseMoney("3.00").value();
  ListedResource fw = Run("fwh200");
  fw.provider_type = ProviderType::kFireworks;
  fw.billing.gpu_type = "H200";
  ListedResource other_provider = Run("bth200");  // Baseten H200: Fireworks' list does not apply
  other_provider.billing.gpu_type = "H200";
  ListedResource tokens = Run("sess", 0);
  tokens.provider_type = ProviderType::kFireworks;
  tokens.billing.meter = Meter::kTokens;
  tokens.base_model = "accounts/fireworks/models/muse-glimmer-30b";
  tokens.tokens = {{"train", 1'000'000}};
  ListedResource unknown_model = tokens;
  unknown_model.id = "sess2";
  unknown_model.base_model = "accounts/acme/models/private-9b";
  for (ListedResource* r : {&configured, &listed, &own, &fw, &other_provider}) r->activity.busy_now = true;

  std::ostringstream log;
  Log().set_output(&log);
  {
    auto s = store::Store::Open({.path = db});
    REQUIRE(s.ok());
    auto snap = Snap({configured, listed, own, fw, other_provider, tokens, unknown_model});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0, p).ok());
    tokens.tokens["train"] = 2'000'000;
    unknown_model.tokens["train"] = 2'000'000;
    snap = Snap({configured, listed, own, fw, other_provider, tokens, unknown_model});
    REQUIRE((*s)->Ingest({&snap, 1}, kT0 + 1h, p).ok());
    auto burn = [&](const char* id) { return (*s)->Find(std::string("bt/baseten.run/") + id)->BurnPerHour().micros(); };
    CHECK(burn("h100") == Micros("52.00"));     // 8 x 6.50
    CHECK(burn("a100") == Micros("32.00"));     // 8 x 4.00
    CHECK(burn("own") == Micros("24.00"));      // 8 x 3.00
    CHECK(burn("fwh200") == Micros("56.00"));   // 8 x 7.00
    CHECK(burn("bth200") == 0);
    CHECK((*s)->Find("bt/baseten.run/sess")->SpendAt(kT0 + 1h).micros() == Micros("11.72"));  // 2M x 5.86
    CHECK((*s)->Find("bt/baseten.run/sess2")->SpendAt(kT0 + 1h).micros() == 0);
    for (const char* id : {"h100", "a100", "own", "fwh200", "sess"}) {
      CAPTURE(id);
      CHECK_FALSE((*s)->Find(std::string("bt/baseten.run/") + id)->unpriced);
    }
    auto status = (*s)->QueryStatus(kT0 + 1h, 15min);
    REQUIRE(status.ok());
    CHECK(status->unpriced == std::vector<std::string>{"bt/baseten.run/bth200", "bt/baseten.run/sess2"});
  }
  Log().set_output(&std::cout);
  // Loud once per price, not once per poll: two polls, two warnings, each naming the setting.
  const std::string text = log.str();
  size_t warnings = 0;
  for (size_t at = text.find("no price known"); at != std::string::npos; at = text.find("no price known", at + 1)) ++warnings;
  CHECK(warnings == 2);
  CHECK(text.find("pricing.gpu_hour_usd.H200") != std::string::npos);
  CHECK(text.find("pricing.tokens_per_million_usd[\\\"accounts/acme/models/private-9b\\\"].train") != std::string::npos);
  // After a restart (or in `status`, another process) the open interval at price 0 says so.
  auto reopened = store::Store::Open({.path = db, .read_only = true});
  REQUIRE(reopened.ok());
  CHECK((*reopened)->Find("bt/baseten.run/bth200")->unpriced);
  CHECK_FALSE((*reopened)->Find("bt/baseten.run/h100")->unpriced);
}
