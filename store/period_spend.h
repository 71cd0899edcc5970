#pragma once
// Running spend totals for the periods a cycle asks about (internal to store/).
//
// Every cycle needs each account's spend since the day, week and month began, and
// each budget's since its period began. Scanning the ledger for that read a month of
// rows every cycle, growing all month long. These totals read the ledger once at the
// first question (and after retention or a reload), re-read only the rows since a
// period's new start when it moves, and otherwise take each row as it is written.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/flat_hash.h"
#include "core/money.h"
#include "core/time.h"
#include "store/store.h"

namespace loopwarden::store {

// One ledger row as the queries see it.
struct LedgerRow {
  int64_t id = 0;
  std::string resource;
  std::string meter;
  Time start;
  std::optional<Time> end;
  int64_t rate = 0;
  int64_t quantity = 0;
  Money unit_price;
  Money cost;
  bool idle = false;
  int64_t rid = 0;  // the resource's row, where the scan reads it (kLedgerRowsByRidSelect)
};

// The cost of `r` inside [a, b). GPU intervals are prorated from their rate, the same
// formula that closes them; token rows count wholly at their time, or prorated over
// the span they were spent in.
Money CostWithin(const LedgerRow& r, Time a, Time b);

// Spend since each of a fixed list of starts, per (provider, account, kind) cell.
//
// A final row (a closed GPU interval, a token row, a roll-up bucket) whose end has
// passed costs the same inside [start, now) for every later `now`, so it is added once
// and never read again. Rows ending at or after the latest read wait in `pending_`
// (a handful: the ones written this cycle). Open GPU intervals are priced at every
// read from the in-memory state. The result equals a scan of the ledger for any `now`
// not earlier than the last one. Starts that move (a new day, week or month) are
// recomputed from the rows since the new start alone; an earlier `now`, a different
// number of starts, or a ledger changed behind its back (retention, a rolled-back
// ingest) need a new PeriodSpend.
class PeriodSpend {
 public:
  PeriodSpend(std::vector<Time> starts, Time now) : starts_(std::move(starts)), now_(now) {}

  bool Serves(std::span<const Time> starts, Time now) const {
    return now >= now_ && std::equal(starts.begin(), starts.end(), starts_.begin(), starts_.end());
  }
  // A final ledger row of `st`'s resource.
  void AddFinal(const ResourceState& st, const LedgerRow& r);
  // A roll-up bucket: counts in full when `at` falls inside a period (after a Rebase,
  // with `refill`, only in the periods that moved).
  void AddRolled(const std::string& provider, const std::string& account, const std::string& kind, Time at,
                 Money cost, bool refill = false);
  // The totals at `now` (>= the last read), open intervals of `states` included.
  std::vector<SpendCell> At(Time now, const StateList& states);

  // Moves to `starts` (as many as before) at `now` (>= the last read). The columns whose
  // start changed are emptied; the caller refills them through Refill and AddRolled
  // (with `refill`) with every final row and bucket ending in [the instant returned, now). The other
  // columns keep their totals. Nothing when the count differs or `now` went back.
  std::optional<Time> Rebase(std::vector<Time> starts, Time now);
  void Refill(const ResourceState& st, const LedgerRow& r);

 private:
  size_t Cell(const std::string& provider, const std::string& account, std::string_view kind);
  size_t CellOf(const ResourceState& st);
  void Add(size_t cell, const LedgerRow& r);
  // Folds the pending rows that ended before `now`, which becomes the latest read.
  void Advance(Time now);
  void RefillCell(size_t cell, const LedgerRow& r);

  std::vector<Time> starts_;
  Time now_;  // the latest read: rows ending before it are folded into cells_
  std::vector<SpendCell> cells_;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index_;
  // A resource's cell by the addresses of its pooled provider and account names (equal
  // text is one pooled entry) and its kind: a few dozen entries, where one per resource
  // with spend was 2.1 MB at 100k. A hit is checked against the cell's text, as an
  // address is reused once no resource holds its text any more.
  HashMap<std::tuple<const char*, const char*, int>, size_t> cell_by_names_;
  struct Pending {
    size_t cell;
    LedgerRow row;
  };
  std::vector<Pending> pending_;
  std::vector<size_t> refill_;  // the columns the last Rebase emptied
};

}  // namespace loopwarden::store
