// tests/host/test_crc32c.cpp — CRC32C against RFC 3720's test vectors (B.4) and the standard
// check value, on the portable tables and on the hardware instruction when the CPU has it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "host/crc32c.h"

using namespace pure::host;

namespace {

using CrcFunction = uint32_t (*)(uint32_t, const void*, size_t);

std::vector<CrcFunction> implementations() {
  std::vector<CrcFunction> all = {crc32c_portable, crc32c};
  if (crc32c_hardware_available()) all.push_back(crc32c_hardware);
  return all;
}

}  // namespace

TEST_CASE("RFC 3720 B.4 vectors") {
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<unsigned char>(i);
    down[i] = static_cast<unsigned char>(31 - i);
  }
  // An iSCSI read command PDU.
  const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (CrcFunction f : implementations()) {
    CHECK(f(0, zeros.data(), 32) == 0x8A9136AAu);
    CHECK(f(0, ones.data(), 32) == 0x62A8AB43u);
    CHECK(f(0, up.data(), 32) == 0x46DD794Eu);
    CHECK(f(0, down.data(), 32) == 0x113FDB5Cu);
    CHECK(f(0, pdu, 48) == 0xD9963A56u);
    CHECK(f(0, "123456789", 9) == 0xE3069283u);
    CHECK(f(0, "", 0) == 0u);
  }
}

TEST_CASE("chained calls equal one call, at every split and alignment") {
  std::mt19937_64 rng(42);
  std::string data(300, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (CrcFunction f : implementations()) {
    for (size_t start = 0; start < 9; ++start) {
      uint32_t whole = f(0, data.data() + start, data.size() - start);
      CHECK(whole == crc32c_portable(0, data.data() + start, data.size() - start));
      for (size_t split = start; split <= data.size(); split += 7) {
        uint32_t a = f(0, data.data() + start, split - start);
        CHECK(f(a, data.data() + split, data.size() - split) == whole);
      }
    }
  }
}

TEST_CASE("every length of tail (0-7 bytes after the 8-byte steps) gives the portable value") {
  std::mt19937_64 rng(7);
  std::string data(80, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (CrcFunction f : implementations())
    for (size_t start = 0; start < 8; ++start)
      for (size_t n = 0; start + n <= data.size(); ++n)
        CHECK(f(0x12345678u, data.data() + start, n) == crc32c_portable(0x12345678u, data.data() + start, n));
}
