#pragma once
// The secret registry: every secret value loopwarden loads (API keys, webhook URLs,
// signing secrets, the admin token) is registered here the moment it is read, and
// Redact() replaces any occurrence in text bound for a log line, an error message, a
// metric, a Slack message or a database row.
//
// Thread-safe; registration is rare and Redact is a scan per registered secret.

#include <string>
#include <string_view>

namespace loopwarden {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// Registers `value` (ignored when shorter than 4 bytes: too short to be a credential
// and too likely to match ordinary text). For a URL, its path and query are
// registered too, because error texts often quote just the target.
void RegisterSecret(std::string_view value);
// `text` with every registered secret replaced by [REDACTED].
std::string Redact(std::string_view text);
// True when `text` contains a registered secret (tests).
bool ContainsSecret(std::string_view text);
// Forgets every registered secret (tests only).
void ClearSecretsForTesting();

}  // namespace loopwarden
