#include "providers/gpu.h"

#include <cctype>

namespace loopwarden::providers {

std::string NormalizeGpuType(std::string_view raw) {
  std::string s(raw);
  for (const char* prefix : {"NVIDIA_", "AMD_"}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::string_view(prefix).size());
  }
  for (char& c : s) {
    if (c == ' ') c = '_';
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  // Drop a memory suffix: "_80GB", "-40GB".
  const size_t cut = s.find_first_of("_-");
  if (cut != std::string::npos) {
    const std::string rest = s.substr(cut + 1);
    if (rest.size() >= 3 && rest.substr(rest.size() - 2) == "GB" && std::isdigit(static_cast<unsigned char>(rest[0]))) {
      s = s.substr(0, cut);
    }
  }
  return s;
}

}  // namespace loopwarden::providers
