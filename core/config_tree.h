#pragma once
// A parsed YAML document as a plain tree that remembers where every node came from.
//
// Loaders (configuration, policies, simulator scenarios) read this tree, never yaml-cpp
// types, so yaml-cpp stays inside config_tree.cc and every error can name file:line:col.

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loopwarden {

struct SourceMark {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
};

class ConfigNode {
 public:
  enum class Kind { kNull, kScalar, kSequence, kMap };
  struct Entry;

  Kind kind = Kind::kNull;
  SourceMark mark;
  std::string text;     // scalars only
  bool quoted = false;  // scalar written in quotes (or as a block literal): always a string
  std::vector<ConfigNode> items;
  std::vector<Entry> entries;  // maps, in file order; duplicates kept so loaders can reject them

  bool IsNull() const { return kind == Kind::kNull; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsSequence() const { return kind == Kind::kSequence; }
  bool IsMap() const { return kind == Kind::kMap; }
  // The first entry with this key, or null.
  const ConfigNode* Find(std::string_view key) const;
  // "a map", "a list", "a scalar 'x'", "nothing": for error messages.
  std::string Describe() const;
};

struct ConfigNode::Entry {
  std::string key;
  SourceMark key_mark;
  ConfigNode value;
};

// Parses YAML text. A syntax error is InvalidArgument "<origin>:<line>:<col>: <what>".
// Inputs over 4 MiB, or nested more than 64 levels deep, are refused before parsing.
Result<ConfigNode> ParseConfigText(std::string_view text, std::string_view origin);
// Reads and parses a file; an unreadable file is an error naming the path.
Result<ConfigNode> ParseConfigFile(const std::string& path);

// Reads a whole file (up to `max_bytes`).
Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes = 16 << 20);

}  // namespace loopwarden
