#pragma once
// One scan of ledger rows with their resource's key (internal to store/): the spend
// queries and usage reconciliation read the ledger the same way.

#include <string_view>

#include "core/status.h"
#include "store/period_spend.h"
#include "store/sqlite.h"

namespace loopwarden::store {

// The ledger's own columns ReadLedgerRows reads (2 to 9), named once for both selects
// below, so a column added to one is in the other.
#define LW_LEDGER_ROW_COLUMNS "l.meter, l.start_at, l.end_at, l.quantity_rate, l.quantity, l.unit_price, l.cost, l.idle"

// The columns ReadLedgerRows reads, before a WHERE clause over `ledger l`.
inline constexpr std::string_view kLedgerRowsSelect =
    "SELECT l.id, r.key, " LW_LEDGER_ROW_COLUMNS " FROM ledger l JOIN resources r ON r.id = l.rid WHERE ";

// The same columns with the resource's row id after them and its key left empty: for
// scans that know their resources by row id (usage reconciliation), with no join to
// resources, which looked up each row's resource in the largest table for its key.
inline constexpr std::string_view kLedgerRowsByRidSelect =
    "SELECT l.id, '', " LW_LEDGER_ROW_COLUMNS ", l.rid FROM ledger l WHERE ";

#undef LW_LEDGER_ROW_COLUMNS

// Steps `q` (kLedgerRowsSelect, or kLedgerRowsByRidSelect with `with_rid`, and a WHERE
// clause, bound) and calls `visit` with each row. One Row is reused, so a scan of the
// month's ledger allocates nothing per row.
template <typename Visit>
Status ReadLedgerRows(Stmt& q, Visit visit, bool with_rid = false) {
  LedgerRow r{};
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    r.id = q.Int(0);
    r.resource.assign(q.TextView(1));
    r.meter.assign(q.TextView(2));
    r.start = FromUnixMicros(q.Int(3));
    r.end.reset();
    if (auto e = q.OptInt(4)) r.end = FromUnixMicros(*e);
    r.rate = q.Int(5);
    r.quantity = q.Int(6);
    r.unit_price = Money::FromMicros(q.Int(7));
    r.cost = Money::FromMicros(q.Int(8));
    r.idle = q.Int(9) != 0;
    if (with_rid) r.rid = q.Int(10);
    visit(static_cast<const LedgerRow&>(r));
  }
  return Status::Ok();
}

// Calls `visit` with every ledger row matching `where` (over `ledger l`, with ?1 and ?2
// bound to `a` and `b`).
template <typename Visit>
Status ForEachLedgerRow(Db& db, std::string_view where, Time a, Time b, Visit visit) {
  LW_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kLedgerRowsSelect) + std::string(where)));
  q.Bind(1, ToUnixMicros(a)).Bind(2, ToUnixMicros(b));
  return ReadLedgerRows(q, visit);
}

}  // namespace loopwarden::store
