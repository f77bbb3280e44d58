// host/crc32c.h — CRC32C (Castagnoli), the checksum of log records and checkpoint blocks.
// Private to host/. Depends on nothing.
//
// crc32c() picks the SSE4.2 instruction when the CPU has it and otherwise the portable
// slicing-by-8 tables; both give the same values (tests check them against RFC 3720's vectors).
#pragma once
#include <cstddef>
#include <cstdint>

namespace pure::host {

// Extends crc (0 for a fresh checksum) with n bytes. Chaining calls equals one call over the
// concatenation.
uint32_t crc32c(uint32_t crc, const void* data, size_t n);
uint32_t crc32c_portable(uint32_t crc, const void* data, size_t n);
bool crc32c_hardware_available();
uint32_t crc32c_hardware(uint32_t crc, const void* data, size_t n);  // only when available

}  // namespace pure::host
