#include "providers/gpu.h"

#include <cctype>

namespace loopwarden::providers {

std::string NormalizeGpuType(std::string_view raw) {
  // Views until the one copy at the end: every listed Baseten object passes through here.
  for (std::string_view prefix : {"NVIDIA_", "AMD_"}) {
    if (raw.starts_with(prefix)) raw.remove_prefix(prefix.size());
  }
  std::string s(raw);
  for (char& c : s) {
    if (c == ' ') c = '_';
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  // Drop a memory suffix: "_80GB", "-40GB".
  const size_t cut = s.find_first_of("_-");
  if (cut != std::string::npos) {
    const std::string_view rest = std::string_view(s).substr(cut + 1);
    if (rest.size() >= 3 && rest.ends_with("GB") && std::isdigit(static_cast<unsigned char>(rest[0]))) s.resize(cut);
  }
  return s;
}

}  // namespace loopwarden::providers
