#include "providers/fireworks/account_metrics.h"

#include <cmath>
#include <cstdlib>

namespace loopwarden::providers::fireworks {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
}

// Parses `{k="v",…}` from `s` at `i`; fills deployment / deployment_id.
Status Labels(std::string_view s, size_t& i, std::string& id, std::string& full) {
  ++i;  // '{'
  while (i < s.size() && s[i] != '}') {
    size_t k = i;
    while (i < s.size() && NameChar(s[i])) ++i;
    const std::string_view key = s.substr(k, i - k);
    if (key.empty() || i + 1 >= s.size() || s[i] != '=' || s[i + 1] != '"') return InvalidArgument("malformed label");
    i += 2;
    std::string value;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) {
        ++i;
        value.push_back(s[i] == 'n' ? '\n' : s[i]);
      } else {
        value.push_back(s[i]);
      }
      ++i;
    }
    if (i >= s.size()) return InvalidArgument("unterminated label value");
    ++i;  // closing quote
    if (key == "deployment_id") id = value;
    if (key == "deployment") full = value;
    if (i < s.size() && s[i] == ',') ++i;
  }
  if (i >= s.size()) return InvalidArgument("unterminated label set");
  ++i;  // '}'
  return Status::Ok();
}

}  // namespace

Result<std::map<std::string, double, std::less<>>> ParseAccountMetrics(std::string_view text) {
  std::map<std::string, double, std::less<>> out;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    auto bad = [&](const std::string& why) {
      return InvalidArgument("account metrics line " + std::to_string(line_no) + ": " + why);
    };
    size_t i = 0;
    while (i < line.size() && NameChar(line[i])) ++i;
    const std::string_view name = line.substr(0, i);
    if (name.empty()) return bad("no metric name");
    std::string id, full;
    if (i < line.size() && line[i] == '{') {
      if (Status s = Labels(line, i, id, full); !s.ok()) return bad(s.message());
    }
    if (i >= line.size() || line[i] != ' ') return bad("no value");
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t v0 = i;
    while (i < line.size() && line[i] != ' ') ++i;
    const std::string value(line.substr(v0, i - v0));
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') return bad("value is not a number");
    if (name.rfind("request_counter_total", 0) != 0) continue;
    if (id.empty() && !full.empty()) id = full.substr(full.rfind('/') + 1);
    if (id.empty()) continue;  // not per deployment
    // NaN or a negative rate is no evidence of traffic either way; keep it present.
    out[id] += std::isfinite(v) && v > 0 ? v : 0.0;
  }
  return out;
}

}  // namespace loopwarden::providers::fireworks
