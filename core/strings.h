#pragma once
// Small string helpers shared by the loaders, the log formatter and the tables.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loopwarden {

std::string_view Trim(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
std::string Join(std::span<const std::string> parts, std::string_view sep);
std::string ToLower(std::string_view s);

// Levenshtein distance; used for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);
// The closest candidate within a distance that scales with the word's length (a
// transposition or a missing letter in a short key, a few letters in a long one), or
// nothing when every candidate is far.
std::optional<std::string> Suggest(std::string_view word, std::span<const std::string_view> candidates);
std::optional<std::string> Suggest(std::string_view word, std::span<const std::string> candidates);

// `s` as valid UTF-8 with no control characters but newline and tab: invalid bytes and
// controls (NUL included) become U+FFFD. For text that leaves the process in formats
// that cannot escape them (Prometheus exposition).
std::string SafeText(std::string_view s);

// The body of a JSON string literal for `s` (no surrounding quotes). Invalid UTF-8
// bytes become U+FFFD so every emitted line is valid JSON.
std::string JsonEscape(std::string_view s);
// `s` in double quotes, JSON-escaped.
std::string JsonQuote(std::string_view s);
// JsonQuote(s) appended to `out`, without a string of its own (for loops over a fleet).
void AppendJsonQuoted(std::string& out, std::string_view s);

// Left-aligned text table with a header row; columns padded to their widest cell.
std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// Hex of bytes (lowercase).
std::string HexEncode(std::string_view bytes);

}  // namespace loopwarden
