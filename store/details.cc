// The adapters' detail caches (schema v4 `details`): opaque bodies by provider and key.
#include "core/secrets.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace loopwarden::store {

Result<std::vector<DetailRecord>> Store::LoadDetails(std::string_view provider) {
  LW_ASSIGN_OR_RETURN(Stmt q, db_->Prepare("SELECT key, fetched_at, body FROM details WHERE provider = ?1"));
  q.Bind(1, provider);
  std::vector<DetailRecord> out;
  while (true) {
    LW_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back({q.Text(0), FromUnixMicros(q.Int(1)), q.Text(2)});
  }
  return out;
}

Status Store::SaveDetails(std::string_view provider, const std::vector<DetailRecord>& changes) {
  if (changes.empty()) return Status::Ok();
  return InTransaction(*db_, [&]() -> Status {
    for (const DetailRecord& d : changes) {
      if (d.body.empty()) {
        LW_ASSIGN_OR_RETURN(Stmt* del, Cached("DELETE FROM details WHERE provider = ?1 AND key = ?2"));
        del->Bind(1, provider).Bind(2, d.key);
        LW_RETURN_IF_ERROR(del->Run());
        continue;
      }
      LW_ASSIGN_OR_RETURN(Stmt* put, Cached(
          "INSERT INTO details (provider, key, fetched_at, body) VALUES (?1, ?2, ?3, ?4) "
          "ON CONFLICT(provider, key) DO UPDATE SET fetched_at = ?3, body = ?4"));
      put->Bind(1, provider).Bind(2, d.key).Bind(3, ToUnixMicros(d.fetched)).Bind(4, Redact(d.body));
      LW_RETURN_IF_ERROR(put->Run());
    }
    return Status::Ok();
  }).WithContext("saving provider " + std::string(provider) + "'s detail cache");
}

}  // namespace loopwarden::store
