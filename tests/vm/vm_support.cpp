// tests/vm/vm_support.cpp — the forked runner and the step-at-a-time driver (see vm_support.h).
#include "tests/vm/vm_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include <doctest/doctest.h>

#include "runtime/event_list.h"
#include "tests/support/run_text.h"
#include "vm/engine.h"
#include "vm/vm.h"

namespace pure::test {
namespace {

// ---- running in-process ----------------------------------------------------------------------

Outcome run_here(const std::string& text, const RunConfig& config) {
  vm::RunOptions options;
  options.max_steps = config.max_steps;
  options.max_memory = config.max_memory;
  options.args = config.args;
  options.read_input = [input = config.input] { return input; };
  // Both engines run through the one driver loop (vm/driver.cpp); only the engine differs.
  vm::StepEngine stepper;
  if (config.engine == Engine::Step) options.engine = &stepper;
  vm::LoadOptions load;
  load.inline_calls = config.inline_calls;
  TextRun run = run_text(text, options, load);
  Outcome out;
  out.compile_errors = std::move(run.compile_errors);
  out.output = std::move(run.output);
  out.leaked_texts = run.leaked_texts;
  out.instructions = stepper.instructions;
  if (run.failure) {
    out.failed = true;
    out.message = run.failure->message;
    out.line = run.failure->loc.line;
    out.col = run.failure->loc.col;
    for (const vm::StackEntry& e : run.failure->stack)
      out.stack.push_back(e.function + "@" + std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col));
    out.rendered = run.failure->render("t.pure");
  }
  return out;
}

// ---- a tiny serialization over a pipe ----------------------------------------------------------

void put(std::string& buf, const std::string& s) {
  uint64_t n = s.size();
  buf.append(reinterpret_cast<const char*>(&n), sizeof n);
  buf.append(s);
}
void put(std::string& buf, int64_t v) { put(buf, std::to_string(v)); }

struct Reader {
  const std::string& buf;
  size_t pos = 0;
  bool ok = true;
  std::string get() {
    uint64_t n = 0;
    if (pos + sizeof n > buf.size()) return ok = false, std::string();
    std::memcpy(&n, buf.data() + pos, sizeof n);
    pos += sizeof n;
    if (pos + n > buf.size()) return ok = false, std::string();
    std::string s = buf.substr(pos, n);
    pos += n;
    return s;
  }
  int64_t get_int() {
    std::string s = get();
    return s.empty() ? 0 : std::stoll(s);
  }
};

std::string encode(const Outcome& o) {
  std::string b;
  put(b, o.compile_errors);
  put(b, o.output);
  put(b, int64_t{o.failed});
  put(b, o.message);
  put(b, int64_t{o.line});
  put(b, int64_t{o.col});
  put(b, static_cast<int64_t>(o.stack.size()));
  for (const std::string& s : o.stack) put(b, s);
  put(b, o.leaked_texts);
  put(b, static_cast<int64_t>(o.instructions));
  put(b, o.rendered);
  return b;
}

Outcome decode(const std::string& b) {
  Outcome o;
  Reader r{b};
  o.compile_errors = r.get();
  o.output = r.get();
  o.failed = r.get_int() != 0;
  o.message = r.get();
  o.line = static_cast<uint32_t>(r.get_int());
  o.col = static_cast<uint32_t>(r.get_int());
  int64_t n = r.get_int();
  for (int64_t i = 0; i < n && r.ok; ++i) o.stack.push_back(r.get());
  o.leaked_texts = r.get_int();
  o.instructions = static_cast<uint64_t>(r.get_int());
  o.rendered = r.get();
  if (!r.ok) o.signal = -1;  // truncated: the child died while writing
  return o;
}

}  // namespace

Outcome run_program(const std::string& text, const RunConfig& config) {
  int fds[2];
  if (pipe(fds) != 0) return run_here(text, config);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string bytes = encode(run_here(text, config));
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t w = write(fds[1], bytes.data() + done, bytes.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    _exit(0);  // skip destructors and atexit handlers of the parent's copy
  }
  close(fds[1]);
  std::string bytes;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    Outcome o;
    o.signal = WTERMSIG(status);
    return o;
  }
  return decode(bytes);
}

std::string output_of(const std::string& text, Engine engine) {
  RunConfig config;
  config.engine = engine;
  Outcome o = run_program(text, config);
  if (o.signal) return "<crashed with signal " + std::to_string(o.signal) + ">";
  if (!o.compile_errors.empty()) return "<compile errors>\n" + o.compile_errors;
  if (o.failed) return o.output + "<runtime error>\n" + o.rendered;
  if (o.leaked_texts != 0) return o.output + "<leaked " + std::to_string(o.leaked_texts) + " texts>";
  return o.output;
}

std::string both_engines(const std::string& text) {
  std::string a = output_of(text, Engine::Interpret);
  CHECK(output_of(text, Engine::Step) == a);
  return a;
}

std::string clean_on_both(const std::string& text) {
  Outcome a = run_program(text);
  RunConfig step;
  step.engine = Engine::Step;
  Outcome b = run_program(text, step);
  CHECK(a.signal == 0);
  CHECK(b.signal == 0);
  CHECK(a.compile_errors == "");
  CHECK_MESSAGE(!a.failed, a.message);
  CHECK(a.output == b.output);
  CHECK(a.failed == b.failed);
  CHECK(a.message == b.message);
  CHECK(a.leaked_texts == 0);
  CHECK(b.leaked_texts == 0);
  return a.output;
}

}  // namespace pure::test
