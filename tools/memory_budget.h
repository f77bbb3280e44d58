// tools/memory_budget.h — the default memory budget of pure-run and pure-serve, derived from the
// machine, and the parsing of a size given on their command lines (512M, 4G).
//
// The budget (runtime/memory.h) counts the bytes a run holds in texts, lists and stored rows; it
// must be reached before the kernel kills the process or the allocator refuses, because only the
// budget fails a call with a clear message at the place it happened. What really limits a process
// is the smallest of: the machine's physical memory, the cgroup's limit (v2 memory.max, v1
// memory.limit_in_bytes: a container's), and RLIMIT_AS (`ulimit -v`, address space, of which the
// program's code, the JIT, thread stacks and the slot stack already hold some at the start). The
// default budget is that smallest limit times limits::kMemoryBudgetShare (see there for why).
#pragma once
#include <cstdint>
#include <string>

namespace pure::tools {

struct MachineMemory {
  uint64_t physical = 0;      // bytes of RAM; 0: unknown
  uint64_t cgroup = 0;        // the cgroup's memory limit; 0: none or unknown
  uint64_t address_space = 0; // RLIMIT_AS less the address space already mapped; 0: unlimited
  uint64_t smallest() const;  // the smallest of those known; 0: none known
  std::string describe() const;  // "physical memory 24 GiB, no cgroup limit, ..." for --help and logs
};

MachineMemory machine_memory();

// The default budget: machine_memory().smallest() times limits::kMemoryBudgetShare, at least
// limits::kMemoryBudgetFloor; limits::kMemoryBudgetUnknown when nothing is known.
uint64_t default_memory_budget(const MachineMemory& m);

// A size on the command line: decimal digits with an optional K, M or G (powers of 1024), at least
// 1 and at most INT64_MAX bytes. Returns "" and sets out, or the reason it is not one.
std::string parse_size(const std::string& text, uint64_t& out);

// "4 GiB", "512 MiB", "1234 bytes": a size for messages.
std::string size_text(uint64_t bytes);

}  // namespace pure::tools
