// tests/host/host_test_support.h — the small module the durability tests run: two stored lists,
// "put" and "remove" events whose arguments are encoded bytes, an apply function that replays
// them as store transactions, canonical dumps (texts by bytes), reference replays, temp dirs.
// Depends on host/host.h, host/file_io.h and runtime/store.h.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "host/file_io.h"
#include "host/host.h"
#include "runtime/store.h"
#include "temp_dir.h"

namespace host_test {

using namespace pure;
using namespace pure::host;

inline constexpr uint64_t kModule = 0x5045524d414e454eull;
inline constexpr uint32_t kPut = 0;
inline constexpr uint32_t kRemove = 1;

// accounts: key Int -> balance Int, note Text; history: a sequence of (key Int, note Text).
inline std::vector<rt::ListSchema> schemas() {
  return {
      {"accounts", false, {rt::ColType::Int}, {rt::ColType::Int, rt::ColType::Text}},
      {"history", true, {}, {rt::ColType::Int, rt::ColType::Text}},
  };
}

struct Event {
  uint32_t event = kPut;
  std::string args;
};

inline void put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}
inline uint64_t get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The i-th event of every workload (i from 1): deterministic, with texts of many lengths.
inline Event workload_event(uint64_t i) {
  Event e;
  uint64_t key = (i * 7) % 13;
  if (i % 5 == 4) {
    e.event = kRemove;
    put64(e.args, key);
    return e;
  }
  put64(e.args, key);
  put64(e.args, i * 1000 + key);
  e.args += std::string(i % 11, static_cast<char>('a' + i % 26));
  return e;
}

inline rt::Cell text_cell(rt::Text* t) { return reinterpret_cast<rt::Cell>(t); }

// Replays one event as one transaction.
inline std::string apply_event(rt::Store& store, const LogRecord& r) {
  std::string_view a = r.args;
  if (a.size() < 8) return "arguments too short";
  int64_t key = static_cast<int64_t>(get64(a.data()));
  store.begin();
  std::string note;
  if (r.event == kPut) {
    if (a.size() < 16) {
      store.rollback();
      return "put needs 16 bytes";
    }
    rt::Text* t = rt::text_new(a.substr(16));
    rt::Cell row[3] = {static_cast<rt::Cell>(key), get64(a.data() + 8), text_cell(t)};
    store.list(0).put(row);
    rt::text_release(t);
    note = "put " + std::string(a.substr(16));
  } else if (r.event == kRemove) {
    rt::Cell k = static_cast<rt::Cell>(key);
    note = store.list(0).remove(&k) ? "removed" : "absent";
  } else {
    store.rollback();
    return "no event " + std::to_string(r.event);
  }
  rt::Text* t = rt::text_new(note);
  rt::Cell fields[2] = {static_cast<rt::Cell>(key), text_cell(t)};
  store.list(1).append(fields);
  rt::text_release(t);
  store.commit();
  return "";
}

inline std::string dump(const rt::ListReader& list) {
  std::string out = list.schema().name + " " + std::to_string(list.count()) + ":";
  const rt::ListSchema& s = list.schema();
  for (auto c = list.scan(); c->valid(); c->next()) {
    const rt::Cell* row = c->row();
    for (uint32_t i = 0; i < s.row_width(); ++i) {
      rt::ColType type = i < s.key_width() ? s.key[i] : s.fields[i - s.key_width()];
      if (type == rt::ColType::Text) {
        auto* t = reinterpret_cast<const rt::Text*>(row[i]);
        out += '"' + std::string(t->view()) + '"';
      } else {
        out += std::to_string(static_cast<int64_t>(row[i]));
      }
      out += i + 1 < s.row_width() ? ',' : ';';
    }
  }
  return out + "\n";
}

inline std::string dump(rt::Store& store) {
  std::string out;
  for (size_t i = 0; i < store.list_count(); ++i) out += dump(store.list(i));
  return out;
}

inline std::string dump(const rt::Snapshot& snapshot) {
  std::string out;
  for (size_t i = 0; i < snapshot.list_count(); ++i) out += dump(snapshot.list(i));
  return out;
}

// The state after events 1..n of the workload, replayed on a fresh store.
inline std::string reference(uint64_t n) {
  auto store = rt::make_store(schemas());
  for (uint64_t i = 1; i <= n; ++i) {
    Event e = workload_event(i);
    apply_event(*store, LogRecord{i, e.event, e.args});
  }
  return dump(*store);
}

inline OpenOptions options(LogOptions log = {}) {
  OpenOptions o;
  o.module_identity = kModule;
  o.schemas = schemas();
  o.apply = apply_event;
  o.log = log;
  return o;
}

// Applies workload events first..last to the live store and appends them as one batch.
inline uint64_t submit(OpenedModule& m, uint64_t first, uint64_t last) {
  std::vector<Event> events;
  std::vector<EventIn> in;
  for (uint64_t i = first; i <= last; ++i) events.push_back(workload_event(i));
  for (uint64_t i = first; i <= last; ++i) {
    const Event& e = events[i - first];
    apply_event(*m.store, LogRecord{i, e.event, e.args});
    in.push_back({e.event, e.args});
  }
  return m.log->append(in);
}

}  // namespace host_test
