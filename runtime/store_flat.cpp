// runtime/store_flat.cpp — building flat forms of snapshot lists, and their budget.
#include "runtime/store_flat.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pure::rt::store {
namespace {

uint64_t budget_at_start() {
  const char* s = std::getenv("PURE_FLAT_BUDGET");
  return s && *s ? std::strtoull(s, nullptr, 10) : FlatPolicy{}.budget;
}

std::atomic<uint64_t> g_budget{budget_at_start()};
std::atomic<uint64_t> g_min_seeks{FlatPolicy{}.min_seeks};
std::atomic<uint64_t> g_rows_per_seek{FlatPolicy{}.rows_per_seek};
std::atomic<uint64_t> g_in_use{0};
std::atomic<uint64_t> g_builds{0};

// Takes `bytes` from the budget; false (nothing taken) when it has no room.
bool reserve(uint64_t bytes) {
  uint64_t budget = g_budget.load(std::memory_order_relaxed);
  uint64_t used = g_in_use.load(std::memory_order_relaxed);
  do {
    if (bytes > budget || used > budget - bytes) return false;
  } while (!g_in_use.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

bool huge_pages() {
  static const bool on = [] {
    const char* s = std::getenv("PURE_FLAT_HUGE");
    return !(s && std::strcmp(s, "0") == 0);
  }();
  return on;
}

void advise_huge(void* p, uint64_t bytes) {
#if defined(__linux__)
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without huge pages the rows work the same
#else
  (void)p, (void)bytes;
#endif
}

constexpr uint64_t kHugePage = 2ull << 20;

// The rows' array. A large one (4 MiB or more) is placed on 2 MiB pages where the system has
// them (Linux's transparent huge pages, asked for with madvise; PURE_FLAT_HUGE=0: never): a
// prefix seek lands anywhere in it, and with 4 KiB pages most seeks of a 16 MB array also miss
// the TLB. rows_bytes is what it allocates, rounded up to whole huge pages.
bool on_huge_pages(uint64_t bytes) { return bytes >= 2 * kHugePage && huge_pages(); }
uint64_t rows_bytes(uint64_t cells) {
  uint64_t want = std::max<uint64_t>(cells, 1) * sizeof(Cell);
  return on_huge_pages(want) ? (want + kHugePage - 1) / kHugePage * kHugePage : want;
}
Cell* alloc_rows(uint64_t cells) {
  uint64_t bytes = rows_bytes(cells);
  if (on_huge_pages(bytes)) {
    if (void* p = std::aligned_alloc(kHugePage, bytes)) {
      advise_huge(p, bytes);
      return static_cast<Cell*>(p);
    }
  }
  return static_cast<Cell*>(std::malloc(bytes));
}

}  // namespace

bool flat_eligible(const ListShape& s) {
  return !s.sequence && s.key_width >= 1 && s.schema.key[0] == ColType::Int && s.text_columns.empty();
}

FlatPolicy flat_policy() {
  return FlatPolicy{g_budget.load(std::memory_order_relaxed), g_min_seeks.load(std::memory_order_relaxed),
                    g_rows_per_seek.load(std::memory_order_relaxed)};
}
void set_flat_policy(const FlatPolicy& p) {
  g_budget.store(p.budget, std::memory_order_relaxed);
  g_min_seeks.store(p.min_seeks, std::memory_order_relaxed);
  g_rows_per_seek.store(p.rows_per_seek, std::memory_order_relaxed);
}
uint64_t flat_bytes_in_use() { return g_in_use.load(std::memory_order_relaxed); }
uint64_t flat_builds() { return g_builds.load(std::memory_order_relaxed); }

FlatList::~FlatList() {
  std::free(rows_);
  g_in_use.fetch_sub(bytes_, std::memory_order_relaxed);
}

size_t FlatList::sparse_index(int64_t k) const {
  auto at = std::lower_bound(keys_.begin(), keys_.end(), k);
  if (at == keys_.end() || *at != k) return SIZE_MAX;
  return static_cast<size_t>(at - keys_.begin());
}

std::unique_ptr<FlatList> FlatList::build(const ListShape& s, const TreeRoot& t) {
  if (!flat_eligible(s) || t.count < 0 || static_cast<uint64_t>(t.count) >= UINT32_MAX) return nullptr;
  const uint64_t count = static_cast<uint64_t>(t.count);
  const uint32_t w = s.row_width;
  // Dense when the first keys span at most two per row (plus a little): one entry per key of the
  // span then costs at most 8 bytes a row. Otherwise the distinct keys are searched.
  bool dense = true;
  uint64_t span = 0;
  if (count > 0) {
    int64_t lo = static_cast<int64_t>(tree_first(s, t)[0]), hi = static_cast<int64_t>(tree_last(s, t)[0]);
    span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0 when it wraps: the whole int range
    dense = span != 0 && span <= 2 * count + 64;
  }
  uint64_t row_bytes = rows_bytes(count * w);
  // the worst case for sparse keys: one distinct key a row
  uint64_t index_bytes = dense ? (span + 1) * 4 : (count + 1) * 12;
  uint64_t bytes = row_bytes + index_bytes;
  if (!reserve(bytes)) return nullptr;
  std::unique_ptr<FlatList> f(new (std::nothrow) FlatList());
  if (!f) {
    g_in_use.fetch_sub(bytes, std::memory_order_relaxed);
    return nullptr;
  }
  f->bytes_ = bytes;  // the destructor gives them back from here on
  f->width_ = w;
  f->dense_ = dense;
  try {
    f->rows_ = alloc_rows(count * w);
    if (!f->rows_) return nullptr;
    Cell* out = f->rows_;
    std::unique_ptr<Cursor> c = tree_scan(s, t);
    const Cell* first;
    for (size_t n; (n = c->take_run(&first, SIZE_MAX)) > 0; out += n * w) std::copy(first, first + n * w, out);
    const Cell* rows = f->rows_;
    if (dense) {
      f->base_ = count ? static_cast<int64_t>(rows[0]) : 0;
      f->span_ = span;
      f->starts_.assign(span + 1, 0);
      // starts_[i]: the first row whose key is >= base_ + i
      uint64_t row = 0;
      for (uint64_t i = 0; i <= span; ++i) {
        while (row < count && static_cast<uint64_t>(rows[row * w]) - static_cast<uint64_t>(f->base_) < i) ++row;
        f->starts_[i] = static_cast<uint32_t>(row);
      }
    } else {
      f->keys_.reserve(count);
      f->starts_.reserve(count + 1);
      for (uint64_t row = 0; row < count; ++row) {
        int64_t k = static_cast<int64_t>(rows[row * w]);
        if (row == 0 || k != f->keys_.back()) {
          f->keys_.push_back(k);
          f->starts_.push_back(static_cast<uint32_t>(row));
        }
      }
      f->starts_.push_back(static_cast<uint32_t>(count));
    }
  } catch (const std::bad_alloc&) {
    return nullptr;  // f's destructor gives the bytes back
  }
  g_builds.fetch_add(1, std::memory_order_relaxed);
  return f;
}

}  // namespace pure::rt::store
