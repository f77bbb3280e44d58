// host/crc32c.cpp — CRC32C: slicing-by-8 tables built once, and the x86-64 SSE4.2 crc32
// instruction chosen at run time. Reflected polynomial 0x82F63B78, initial and final xor ~0.
#include "host/crc32c.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define PURE_CRC32C_X86 1
#endif

namespace pure::host {

namespace {

struct Tables {
  uint32_t t[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

uint32_t crc32c_portable(uint32_t crc, const void* data, size_t n) {
  const Tables& tb = tables();
  auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint64_t v = load_le64(p) ^ c;
    c = tb.t[7][v & 0xFF] ^ tb.t[6][(v >> 8) & 0xFF] ^ tb.t[5][(v >> 16) & 0xFF] ^ tb.t[4][(v >> 24) & 0xFF] ^
        tb.t[3][(v >> 32) & 0xFF] ^ tb.t[2][(v >> 40) & 0xFF] ^ tb.t[1][(v >> 48) & 0xFF] ^ tb.t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ tb.t[0][(c ^ *p++) & 0xFF];
  return ~c;
}

#if PURE_CRC32C_X86
bool crc32c_hardware_available() {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_hardware(uint32_t crc, const void* data, size_t n) {
  auto* p = static_cast<const unsigned char*>(data);
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // x86-64 is little-endian
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  // The tail in at most three steps (a log record's 4-byte length field is one), not a byte each.
  if (n >= 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    c32 = _mm_crc32_u32(c32, v);
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c32 = _mm_crc32_u16(c32, v);
    p += 2;
    n -= 2;
  }
  if (n) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
#else
bool crc32c_hardware_available() { return false; }
uint32_t crc32c_hardware(uint32_t crc, const void* data, size_t n) { return crc32c_portable(crc, data, n); }
#endif

uint32_t crc32c(uint32_t crc, const void* data, size_t n) {
  return crc32c_hardware_available() ? crc32c_hardware(crc, data, n) : crc32c_portable(crc, data, n);
}

}  // namespace pure::host
