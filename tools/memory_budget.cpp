// tools/memory_budget.cpp — see memory_budget.h.
#include "tools/memory_budget.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

#include "base/limits.h"

namespace pure::tools {

namespace {

// The first decimal number in a file ("max" and anything else unreadable: 0).
uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return 0;
  if (word.size() > 19) return 0;  // "unlimited" written as a huge number (v1: 9223372036854771712)
  return std::stoull(word);
}

// The cgroup limit of this process: v2's memory.max of its own cgroup (or the root of the
// namespace's hierarchy, as a container sees it), else v1's memory.limit_in_bytes. v1 writes a
// number near 2^63 for "no limit"; anything at or past the physical memory counts as none.
uint64_t cgroup_limit() {
  std::ifstream in("/proc/self/cgroup");
  std::string line, v2path;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) v2path = line.substr(3);
  uint64_t limit = 0;
  auto take = [&](uint64_t v) {
    if (v && (!limit || v < limit)) limit = v;
  };
  if (!v2path.empty() && v2path != "/") take(read_number(("/sys/fs/cgroup" + v2path + "/memory.max").c_str()));
  take(read_number("/sys/fs/cgroup/memory.max"));
  take(read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
  return limit;
}

// Address space mapped now (the first field of /proc/self/statm, in pages).
uint64_t mapped_now() {
  std::ifstream in("/proc/self/statm");
  uint64_t pages = 0;
  in >> pages;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

uint64_t MachineMemory::smallest() const {
  uint64_t s = 0;
  for (uint64_t v : {physical, cgroup, address_space})
    if (v && (!s || v < s)) s = v;
  return s;
}

std::string MachineMemory::describe() const {
  std::string out = "physical memory " + (physical ? size_text(physical) : std::string("unknown"));
  out += cgroup ? ", cgroup limit " + size_text(cgroup) : std::string(", no cgroup limit");
  out += address_space ? ", address space left under RLIMIT_AS " + size_text(address_space) : std::string(", no RLIMIT_AS");
  return out;
}

MachineMemory machine_memory() {
  MachineMemory m;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) m.physical = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  m.cgroup = cgroup_limit();
  if (m.physical && m.cgroup >= m.physical) m.cgroup = 0;  // "no limit" as v1 writes it
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    uint64_t used = mapped_now();
    m.address_space = r.rlim_cur > used ? r.rlim_cur - used : 1;
  }
  return m;
}

uint64_t default_memory_budget(const MachineMemory& m) {
  uint64_t s = m.smallest();
  if (!s) return limits::kMemoryBudgetUnknown;
  uint64_t b = static_cast<uint64_t>(static_cast<double>(s) * limits::kMemoryBudgetShare);
  b &= ~((uint64_t{1} << 20) - 1);  // whole MiB: the budget's message reads "1907 MiB"
  return std::max(b, limits::kMemoryBudgetFloor);
}

std::string parse_size(const std::string& text, uint64_t& out) {
  const uint64_t kMax = INT64_MAX;
  const std::string what = "a size in bytes, optionally with K, M or G (powers of 1024), such as 64M or 4G";
  size_t digits = text.find_first_not_of("0123456789");
  if (digits == std::string::npos) digits = text.size();
  uint64_t unit = 1;
  std::string suffix = text.substr(digits);
  char u = suffix.size() == 1 ? static_cast<char>(std::tolower(static_cast<unsigned char>(suffix[0]))) : 0;
  if (u == 'k' || u == 'm' || u == 'g')
    unit = uint64_t{1} << (u == 'k' ? 10 : u == 'm' ? 20 : 30);
  else if (!suffix.empty())
    return "needs " + what + ", not '" + text + "'";
  if (digits == 0) return "needs " + what + ", not '" + text + "'";
  uint64_t n = 0;
  for (size_t i = 0; i < digits; ++i) {
    if (n > (kMax - (text[i] - '0')) / 10) return text + " is too large (the largest is " + std::to_string(kMax) + " bytes)";
    n = n * 10 + (text[i] - '0');
  }
  if (n > kMax / unit) return text + " is too large (the largest is " + std::to_string(kMax) + " bytes)";
  if (n == 0) return "needs " + what + ", not '" + text + "'";
  out = n * unit;
  return "";
}

std::string size_text(uint64_t bytes) {
  static const char* units[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    uint64_t unit = uint64_t{1} << (30 - 10 * i);
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + units[i];
  }
  return std::to_string(bytes) + " bytes";
}

}  // namespace pure::tools
