// host/vm_runner.cpp — the glue between the durable host and the VM: module identity, the log's
// encoding of vm::Value arguments, and an EventRunner over vm::call_event. The only file of
// host/ that includes vm/. Depends on host.h, bytes.h and vm/vm.h.
#include <bit>
#include <cstring>

#include "base/assert.h"
#include "host/bytes.h"
#include "host/host.h"
#include "vm/vm.h"

namespace pure::host {

namespace {

constexpr int kMaxDepth = 64;  // nesting of items and lists in one argument

// A seq argument is a List: lists were in this encoding from version 1 of the log, so older logs
// decode unchanged (docs/durability.md). Sized first, then written in place: a seq of items is
// hundreds of bytes, and appending them one at a time cost more than the event's own parsing did.
size_t encoded_size(const vm::Value& v) {
  switch (v.kind) {
    case vm::Value::Kind::Int:
    case vm::Value::Kind::Bool:
    case vm::Value::Kind::Num: return 9;
    case vm::Value::Kind::Text: return 5 + v.text.size();
    case vm::Value::Kind::Item:
    case vm::Value::Kind::List: {
      size_t n = 5;
      for (const vm::Value& item : v.items) n += encoded_size(item);
      return n;
    }
  }
  return 0;
}

void store_u64(char* p, uint64_t v) {
  store_u32(p, static_cast<uint32_t>(v));
  store_u32(p + 4, static_cast<uint32_t>(v >> 32));
}

char* encode_value(char* out, const vm::Value& v) {
  *out++ = static_cast<char>(v.kind);
  switch (v.kind) {
    case vm::Value::Kind::Int:
    case vm::Value::Kind::Bool: store_u64(out, static_cast<uint64_t>(v.i)); return out + 8;
    case vm::Value::Kind::Num: store_u64(out, std::bit_cast<uint64_t>(v.n)); return out + 8;
    case vm::Value::Kind::Text:
      store_u32(out, static_cast<uint32_t>(v.text.size()));
      std::memcpy(out + 4, v.text.data(), v.text.size());
      return out + 4 + v.text.size();
    case vm::Value::Kind::Item:
    case vm::Value::Kind::List:
      store_u32(out, static_cast<uint32_t>(v.items.size()));
      out += 4;
      for (const vm::Value& item : v.items) out = encode_value(out, item);
      return out;
  }
  return out;
}

struct Decoder {
  std::string_view bytes;
  size_t at = 0;
  std::string error;

  bool need(size_t n) {
    if (bytes.size() - at >= n) return true;
    if (error.empty()) error = "encoded arguments cut short at byte " + std::to_string(at);
    return false;
  }
  bool value(vm::Value* v, int depth) {
    if (depth > kMaxDepth) {
      error = "encoded arguments nest deeper than " + std::to_string(kMaxDepth);
      return false;
    }
    if (!need(1)) return false;
    uint8_t kind = static_cast<uint8_t>(bytes[at++]);
    if (kind > static_cast<uint8_t>(vm::Value::Kind::List)) {
      error = "unknown value kind " + std::to_string(kind) + " at byte " + std::to_string(at - 1);
      return false;
    }
    v->kind = static_cast<vm::Value::Kind>(kind);
    switch (v->kind) {
      case vm::Value::Kind::Int:
      case vm::Value::Kind::Bool:
      case vm::Value::Kind::Num: {
        if (!need(8)) return false;
        uint64_t bits = get_u64(bytes.data() + at);
        at += 8;
        if (v->kind == vm::Value::Kind::Num) std::memcpy(&v->n, &bits, 8);
        else v->i = static_cast<int64_t>(bits);
        return true;
      }
      case vm::Value::Kind::Text: {
        if (!need(4)) return false;
        uint32_t n = get_u32(bytes.data() + at);
        at += 4;
        if (!need(n)) return false;
        v->text.assign(bytes.data() + at, n);
        at += n;
        return true;
      }
      case vm::Value::Kind::Item:
      case vm::Value::Kind::List: {
        if (!need(4)) return false;
        uint32_t n = get_u32(bytes.data() + at);
        at += 4;
        if (n > bytes.size() - at) return need(n);  // each value takes at least one byte
        v->items.resize(n);
        for (vm::Value& item : v->items)
          if (!value(&item, depth + 1)) return false;
        return true;
      }
    }
    return false;
  }
};

class VmRunner final : public EventRunner {
 public:
  VmRunner(const vm::Program& program, uint64_t max_steps) : program_(program) { options_.max_steps = max_steps; }

  EventOutcome run(rt::Store& store, uint32_t event, std::string_view args) override {
    EventOutcome outcome;
    if (event >= program_.functions.size() || program_.functions[event].kind != FuncKind::Event) {
      outcome.reason = "no event with index " + std::to_string(event);
      return outcome;
    }
    std::vector<vm::Value> values;
    if (Status s = decode_values(args, &values); !s.ok()) {
      outcome.reason = s.error;
      return outcome;
    }
    vm::CallResult r = vm::call_event(program_, store, event, values, options_);
    outcome.ok = r.ok;
    if (!r.ok) outcome.reason = !r.reason.empty() ? r.reason : r.error ? r.error->render(program_.path) : "the event failed";
    return outcome;
  }

 private:
  const vm::Program& program_;
  vm::RunOptions options_;
};

}  // namespace

uint64_t module_identity(const vm::Program& program) {
  // FNV-1a, 64 bits: stable across machines and runs (no addresses in the dump).
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
    h ^= 0xff;  // separates the parts
    h *= 0x100000001b3ull;
  };
  mix(vm::dump_bytecode(program));
  for (const rt::Text* t : program.texts) mix(t->view());  // the dump shows constants by index only
  for (const rt::ListSchema& list : program.stored) {
    std::string shape = list.name + (list.is_sequence ? ":seq:" : ":keyed:");
    for (rt::ColType t : list.key) shape += char('0' + static_cast<int>(t));
    shape += ':';
    for (rt::ColType t : list.fields) shape += char('0' + static_cast<int>(t));
    mix(shape);
  }
  return h;
}

void append_encoded_values(std::string& out, std::span<const vm::Value> values) {
  size_t n = 4;
  for (const vm::Value& v : values) n += encoded_size(v);
  const size_t start = out.size();
  out.resize(start + n);
  store_u32(out.data() + start, static_cast<uint32_t>(values.size()));
  char* at = out.data() + start + 4;
  for (const vm::Value& v : values) at = encode_value(at, v);
  PURE_ASSERT(at == out.data() + out.size());
}

std::string encode_values(std::span<const vm::Value> values) {
  std::string out;
  append_encoded_values(out, values);
  return out;
}

Status decode_values(std::string_view bytes, std::vector<vm::Value>* out) {
  Decoder d{bytes};
  out->clear();
  if (!d.need(4)) return Status::failure(d.error);
  uint32_t n = get_u32(bytes.data());
  d.at = 4;
  if (n > bytes.size()) return Status::failure("encoded arguments claim " + std::to_string(n) + " values");
  out->resize(n);
  for (vm::Value& v : *out)
    if (!d.value(&v, 0)) return Status::failure(d.error);
  if (d.at != bytes.size()) return Status::failure("encoded arguments have " + std::to_string(bytes.size() - d.at) + " bytes left over");
  return {};
}

std::unique_ptr<EventRunner> make_vm_runner(const vm::Program& program, uint64_t max_steps) {
  return std::make_unique<VmRunner>(program, max_steps);
}

}  // namespace pure::host
