// host/bytes.h — little-endian integers in byte buffers, the one encoding of every on-disk field.
// Private to host/. Depends on nothing.
#pragma once
#include <cstdint>
#include <string>

namespace pure::host {

inline void put_u8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }
inline void put_u16(std::string& out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void store_u32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline void store_u64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

inline uint16_t get_u16(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}
inline uint32_t get_u32(const char* p) {
  auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t(u[0]) | (uint32_t(u[1]) << 8) | (uint32_t(u[2]) << 16) | (uint32_t(u[3]) << 24);
}
inline uint64_t get_u64(const char* p) { return uint64_t(get_u32(p)) | (uint64_t(get_u32(p + 4)) << 32); }

// Fixed-width decimal, so file names sort in numeric order.
inline std::string padded(uint64_t v) {
  std::string s = std::to_string(v);
  return std::string(s.size() < 20 ? 20 - s.size() : 0, '0') + s;
}

inline std::string hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 15; i >= 0; --i) s += digits[(v >> (4 * i)) & 15];
  return s;
}

}  // namespace pure::host
