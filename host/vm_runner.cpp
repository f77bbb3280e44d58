// host/vm_runner.cpp — the glue between the durable host and the VM: module identity, the log's
// encoding of vm::Value arguments, and an EventRunner over vm::call_event. The only file of
// host/ that includes vm/. Depends on host.h, bytes.h and vm/vm.h.
#include <cstring>

#include "host/bytes.h"
#include "host/host.h"
#include "vm/vm.h"

namespace pure::host {

namespace {

constexpr int kMaxDepth = 64;  // nesting of items and lists in one argument

// A seq argument is a List: lists were in this encoding from version 1 of the log, so older logs
// decode unchanged (docs/durability.md).
void encode_value(std::string& out, const vm::Value& v) {
  put_u8(out, static_cast<uint8_t>(v.kind));
  switch (v.kind) {
    case vm::Value::Kind::Int:
    case vm::Value::Kind::Bool: put_u64(out, static_cast<uint64_t>(v.i)); break;
    case vm::Value::Kind::Num: {
      uint64_t bits;
      std::memcpy(&bits, &v.n, 8);
      put_u64(out, bits);
      break;
    }
    case vm::Value::Kind::Text:
      put_u32(out, static_cast<uint32_t>(v.text.size()));
      out += v.text;
      break;
    case vm::Value::Kind::Item:
    case vm::Value::Kind::List:
      put_u32(out, static_cast<uint32_t>(v.items.size()));
      for (const vm::Value& item : v.items) encode_value(out, item);
      break;
  }
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

std::string encode_values(std::span<const vm::Value> values) {
  std::string out;
  put_u32(out, static_cast<uint32_t>(values.size()));
  for (const vm::Value& v : values) encode_value(out, v);
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
