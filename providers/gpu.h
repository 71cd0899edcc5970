#pragma once
// GPU type names as the pricing table knows them.

#include <string>
#include <string_view>

namespace loopwarden::providers {

// "H100" -> "H100"; "A100-40GB" -> "A100"; "H100 MIG" -> "H100_MIG";
// "NVIDIA_H200_141GB" -> "H200"; "AMD_MI300X_192GB" -> "MI300X"; "NVIDIA_GB200" -> "GB200".
std::string NormalizeGpuType(std::string_view raw);

}  // namespace loopwarden::providers
