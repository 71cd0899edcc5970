#include "core/config_tree.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace loopwarden {
namespace {

constexpr size_t kMaxBytes = 4 << 20;
constexpr int kMaxDepth = 64;
constexpr size_t kMaxNodes = 1'000'000;

std::string At(std::string_view origin, int line, int col, std::string_view msg) {
  return std::string(origin) + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + std::string(msg);
}

// yaml-cpp recurses once per nesting level, so a hostile file ("[[[[…" or "- - - - …")
// could exhaust the stack before we see a node. This scan bounds the depth from the
// text itself: flow brackets outside quotes, plus block indentation and compact "- "
// entries per line.
Status CheckNesting(std::string_view text, std::string_view origin) {
  int flow = 0;
  int line = 1;
  size_t line_start = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      continue;
    }
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '#' && (i == line_start || text[i - 1] == ' ')) {
      while (i < text.size() && text[i] != '\n') ++i;
      --i;
      continue;
    }
    if ((c == '"' || c == '\'') && flow > 0) {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (++flow > kMaxDepth) {
        return InvalidArgument(At(origin, line, static_cast<int>(i - line_start + 1), "nested more than 64 levels deep"));
      }
    } else if ((c == ']' || c == '}') && flow > 0) {
      --flow;
    }
    if (i == line_start) {
      size_t j = i;
      int depth = 0;
      while (j < text.size() && text[j] == ' ') {
        ++j;
        ++depth;
      }
      while (j + 1 < text.size() && (text[j] == '-' || text[j] == '?') && text[j + 1] == ' ') {
        j += 2;
        depth += 4;  // a compact entry is worth a level however few columns it takes
        while (j < text.size() && text[j] == ' ') ++j;
      }
      if (depth > 4 * kMaxDepth) {
        return InvalidArgument(At(origin, line, 1, "nested more than 64 levels deep"));
      }
    }
  }
  return Status::Ok();
}

SourceMark ToMark(const YAML::Mark& m) {
  if (m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

Status Convert(const YAML::Node& in, ConfigNode& out, int depth, size_t& nodes, std::string_view origin) {
  out.mark = ToMark(in.Mark());
  if (++nodes > kMaxNodes) {
    return InvalidArgument(At(origin, out.mark.line, out.mark.column, "document too large (aliases expand to over 1M nodes)"));
  }
  if (depth > kMaxDepth) {
    return InvalidArgument(At(origin, out.mark.line, out.mark.column, "nested more than 64 levels deep"));
  }
  switch (in.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.kind = ConfigNode::Kind::kNull;
      return Status::Ok();
    case YAML::NodeType::Scalar:
      out.kind = ConfigNode::Kind::kScalar;
      out.text = in.Scalar();
      // yaml-cpp tags non-plain scalars (quoted, literal, folded) "!"; plain ones "?".
      out.quoted = in.Tag() == "!";
      return Status::Ok();
    case YAML::NodeType::Sequence:
      out.kind = ConfigNode::Kind::kSequence;
      out.items.reserve(in.size());
      for (const YAML::Node& item : in) {
        out.items.emplace_back();
        LW_RETURN_IF_ERROR(Convert(item, out.items.back(), depth + 1, nodes, origin));
      }
      return Status::Ok();
    case YAML::NodeType::Map:
      out.kind = ConfigNode::Kind::kMap;
      for (auto it = in.begin(); it != in.end(); ++it) {
        ConfigNode::Entry e;
        e.key_mark = ToMark(it->first.Mark());
        if (!it->first.IsScalar()) {
          return InvalidArgument(At(origin, e.key_mark.line, e.key_mark.column, "map keys must be plain strings"));
        }
        e.key = it->first.Scalar();
        LW_RETURN_IF_ERROR(Convert(it->second, e.value, depth + 1, nodes, origin));
        out.entries.push_back(std::move(e));
      }
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

const ConfigNode* ConfigNode::Find(std::string_view key) const {
  for (const Entry& e : entries) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

std::string ConfigNode::Describe() const {
  switch (kind) {
    case Kind::kNull: return "nothing";
    case Kind::kMap: return "a map";
    case Kind::kSequence: return "a list";
    case Kind::kScalar: {
      std::string t = text.size() > 40 ? text.substr(0, 40) + "…" : text;
      return "'" + t + "'";
    }
  }
  return "?";
}

Result<ConfigNode> ParseConfigText(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxBytes) return InvalidArgument(std::string(origin) + ": file larger than 4 MiB");
  LW_RETURN_IF_ERROR(CheckNesting(text, origin));
  try {
    YAML::Node doc = YAML::Load(std::string(text));
    ConfigNode root;
    size_t nodes = 0;
    LW_RETURN_IF_ERROR(Convert(doc, root, 0, nodes, origin));
    if (root.mark.line == 0) root.mark = {1, 1};
    return root;
  } catch (const YAML::Exception& e) {
    SourceMark m = ToMark(e.mark);
    return InvalidArgument(At(origin, m.line ? m.line : 1, m.column ? m.column : 1, "YAML syntax error: " + e.msg));
  } catch (const std::exception& e) {
    return InvalidArgument(std::string(origin) + ": cannot parse: " + e.what());
  }
}

Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  // A FIFO or a device would block the open (or never end): only regular files.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    return InvalidArgument("cannot read " + path + ": not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path + ": no such file or not readable");
  std::string data;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    data.append(buf, static_cast<size_t>(in.gcount()));
    if (data.size() > max_bytes) return InvalidArgument(path + ": larger than " + std::to_string(max_bytes) + " bytes");
  }
  if (in.bad()) return Unavailable("error reading " + path);
  return data;
}

Result<ConfigNode> ParseConfigFile(const std::string& path) {
  LW_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, kMaxBytes + 1));
  return ParseConfigText(text, path);
}

}  // namespace loopwarden
