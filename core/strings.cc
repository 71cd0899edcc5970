#include "core/strings.h"

#include <algorithm>
#include <cstdio>

namespace loopwarden {

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      break;
    }
    out.emplace_back(s.substr(start, p - start));
    start = p + 1;
  }
  return out;
}

std::string Join(std::span<const std::string> parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
template <class C>
std::optional<std::string> SuggestImpl(std::string_view word, const C& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    size_t d = EditDistance(ToLower(word), ToLower(c));
    // A candidate that contains the word (or the reverse) is a good guess too: "idle" for "idle_for".
    if (d > limit && (std::string_view(c).find(word) != std::string_view::npos ||
                      word.find(std::string_view(c)) != std::string_view::npos)) {
      d = limit;
    }
    if (d < best_d) {
      best_d = d;
      best = std::string(c);
    }
  }
  return best;
}
}  // namespace

std::optional<std::string> Suggest(std::string_view word, std::span<const std::string_view> candidates) {
  return SuggestImpl(word, candidates);
}
std::optional<std::string> Suggest(std::string_view word, std::span<const std::string> candidates) {
  return SuggestImpl(word, candidates);
}

namespace {
// The length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0.
size_t Utf8Sequence(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return len;
}
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
// At s[i] (a byte >= 0x80): copies one valid UTF-8 sequence whole, or replaces the byte.
void CopyUtf8(std::string_view s, size_t& i, std::string& out) {
  if (size_t len = Utf8Sequence(s, i)) {
    out.append(s.substr(i, len));
    i += len;
  } else {
    out += kReplacement;
    ++i;
  }
}
}  // namespace

std::string SafeText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F ? kReplacement : std::string_view(&s[i], 1);
      ++i;
    } else {
      CopyUtf8(s, i, out);
    }
  }
  return out;
}

namespace {

void AppendJsonEscaped(std::string& out, std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    CopyUtf8(s, i, out);
  }
}

}  // namespace

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  AppendJsonEscaped(out, s);
  return out;
}

void AppendJsonQuoted(std::string& out, std::string_view s) {
  out += '"';
  AppendJsonEscaped(out, s);
  out += '"';
}

std::string JsonQuote(std::string_view s) { return "\"" + JsonEscape(s) + "\""; }

std::string FormatTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < cells.size() ? cells[i] : "";
      out += cell;
      if (i + 1 < width.size()) out += std::string(width[i] - cell.size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string HexEncode(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

}  // namespace loopwarden
