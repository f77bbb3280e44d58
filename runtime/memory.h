// runtime/memory.h — the memory budget: a meter of the bytes a run holds in texts, event lists and
// stored-list nodes, so that a runaway program stops with a runtime error long before the system
// refuses memory (or kills a server hosting other modules).
// Depends on nothing outside the C++ standard library.
//
// Bytes are counted, not measured: each allocation path charges what it asks for (rounded as a
// malloc chunk would be, see charged_size) and credits it when it frees it, so a run counts the
// same bytes on every machine. A meter serves one thread: the host installs it on the thread that
// runs the program (MeterScope) and every allocation and free on that thread goes to it; other
// threads (queries running in parallel) install meters of their own. Frees of memory charged to
// another meter (or to none) are credited to the current one; the drift is bounded by what the
// run inherited, and the count is never used for anything but the budget.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

namespace pure::rt {

// Thrown by memory_charge when an allocation would pass the budget; nothing was charged or
// allocated. A std::bad_alloc, so code that survives running out of memory survives it too.
class MemoryBudgetSpent : public std::bad_alloc {
 public:
  const char* what() const noexcept override { return "memory budget spent"; }
};

class MemoryMeter {
 public:
  explicit MemoryMeter(uint64_t limit) : limit_(limit > INT64_MAX ? INT64_MAX : static_cast<int64_t>(limit)) {}
  uint64_t limit() const { return static_cast<uint64_t>(limit_); }
  // The command-line option that sets this budget, for its message ("--max-memory").
  const char* option() const { return option_; }
  void set_option(const char* option) { option_ = option; }
  int64_t used() const { return used_; }  // charged minus credited since the meter was made
  int64_t peak() const { return peak_; }
  bool over() const { return used_ > limit_; }
  bool fits(uint64_t bytes) const { return bytes <= static_cast<uint64_t>(limit_) && used_ <= limit_ - static_cast<int64_t>(bytes); }
  void add(uint64_t bytes) {
    used_ += static_cast<int64_t>(bytes);
    if (used_ > peak_) peak_ = used_;
  }
  void sub(uint64_t bytes) { used_ -= static_cast<int64_t>(bytes); }
  // Where native code reads limit and used (over(): used > limit, both int64_t), in bytes.
  struct NativeLayout {
    uint32_t limit, used;
  };
  static NativeLayout native_layout();

 private:
  int64_t limit_;
  int64_t used_ = 0;
  int64_t peak_ = 0;
  const char* option_ = "--max-memory";
};

// Installs a meter on this thread for the scope's life; the one before comes back afterwards.
class MeterScope {
 public:
  explicit MeterScope(MemoryMeter& meter);
  ~MeterScope();
  MeterScope(const MeterScope&) = delete;
  MeterScope& operator=(const MeterScope&) = delete;

 private:
  MemoryMeter* previous_;
};

// While one lives, charges on this thread are counted but never throw: for code that must not be
// interrupted half-way (unwinding, copying results out). The caller checks memory_over() after.
class MeterNoThrow {
 public:
  MeterNoThrow();
  ~MeterNoThrow();
  MeterNoThrow(const MeterNoThrow&) = delete;
  MeterNoThrow& operator=(const MeterNoThrow&) = delete;
};

// The bytes an allocation of n bytes is counted as: a malloc chunk (8 bytes of header, 16-byte
// granules, at least 32), so a million one-byte texts count about what they really take.
inline uint64_t charged_size(uint64_t n) { return n <= 24 ? 32 : (n + 8 + 15) & ~uint64_t{15}; }

namespace detail {
// This thread's meter and MeterNoThrow depth (constant-initialised, so reading them is one load).
extern constinit thread_local MemoryMeter* t_meter;
extern constinit thread_local int t_no_throw;
[[noreturn]] void budget_spent();
}  // namespace detail

// The allocation paths call these (with charged_size already applied, or an exact array size).
// memory_charge throws MemoryBudgetSpent, charging nothing, when the bytes do not fit (unless a
// MeterNoThrow lives); memory_note always charges (for code that must not throw: the store);
// memory_credit gives bytes back. All three do nothing when no meter is installed.
inline void memory_charge(uint64_t bytes) {
  MemoryMeter* m = detail::t_meter;
  if (!m) return;
  if (__builtin_expect(!m->fits(bytes), 0) && detail::t_no_throw == 0) detail::budget_spent();
  m->add(bytes);
}
inline void memory_note(uint64_t bytes) {
  if (MemoryMeter* m = detail::t_meter) m->add(bytes);
}
inline void memory_credit(uint64_t bytes) {
  if (MemoryMeter* m = detail::t_meter) m->sub(bytes);
}
inline bool memory_over() {  // the current meter is past its limit
  MemoryMeter* m = detail::t_meter;
  return m && m->over();
}
inline const MemoryMeter* current_meter() { return detail::t_meter; }  // or nullptr

}  // namespace pure::rt
