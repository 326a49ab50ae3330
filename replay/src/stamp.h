// The stamp every value's region holds, word by word; shared by host and device code.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define MEMPLAN_HD __host__ __device__
#else
#define MEMPLAN_HD
#endif

namespace memplan::replay {

inline constexpr uint32_t kPoison = 0xA5A5A5A5u;     // a released region
inline constexpr uint32_t kUnwritten = 0x5A5A5A5Au;  // never written

MEMPLAN_HD inline uint32_t stamp_word(int value, uint64_t word) {
  uint32_t h = static_cast<uint32_t>(value + 1) * 2654435761u ^ static_cast<uint32_t>(word) * 2246822519u ^
               static_cast<uint32_t>(word >> 32) * 3266489917u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  if (h == kPoison || h == kUnwritten) h += 1;
  return h;
}

}  // namespace memplan::replay
