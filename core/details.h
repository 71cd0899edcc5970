#pragma once
// A provider adapter's cached per-resource detail (a metrics read, a checkpoint or
// deployment listing), as an opaque record the store keeps between processes. Only the
// adapter that wrote a body reads it; an empty body means "forget this key".

#include <string>

#include "core/time.h"

namespace loopwarden {

struct DetailRecord {
  std::string key;
  Time fetched;
  std::string body;
};

}  // namespace loopwarden
