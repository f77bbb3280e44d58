// tests/jit/test_stored.cpp — walks of stored lists in compiled loops against the interpreter:
// ITER_NEXT over leaf runs and several leaves, loops whose index does not fit, budgets spent inside
// them, a list changed while walked, BFS queries and prefix walks over flat forms (nested, broken
// off, returned from, left in the middle), cursors and lists kept in registers: the same bytes,
// steps and faults.
// Depends on jit-common/jit.h (and the backend library linked), the frontend, ir/ and vm/.
#include "tests/jit/jit_support.h"

using namespace jit_test;  // Run, run, both, eager_jit, ... (jit_support.h)

TEST_CASE("jit: loops over stored lists compile by default where ITER_NEXT is native (leaf runs)") {
  const bool native = pure::jit::native_backend().lowering_of(pure::ir::Op::ITER_NEXT) == pure::jit::Lowering::Native;
  const char* p = "list pts by id: int { v: int = 0 }\nevent fill() {\n for i in 0 .. 4 { pts[i].v = i + 1 }\n}\n"
                  "fn main() {\n fill()\n var t = 0\n for r in 0 .. 20 {\n  for p in pts {\n   t = (t * 31 + p.v * r) % 1000003\n   t = (t * 7 + r) % 1000003\n   t = (t * 5 + 1) % 1000003\n  }\n }\n"
                  " print(t)\n}\n";
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  pure::jit::Jit by_default(pure::jit::native_backend(), o);
  Run r = run(p, &by_default);
  check_same(run(p, nullptr), r);
  CHECK(r.output == both(p).output);
  if (!native) return;  // a backend without native ITER_NEXT keeps such loops interpreted
  CHECK(r.compiled == 2);  // main's two loops (the inner one headed by ITER_NEXT)
  CHECK(r.rejected == 1);  // fill: stored-list writes through pure_step
  // over an event list, or a stored list walked live in an event, ITER_NEXT would run through
  // pure_step at every row: those loops stay interpreted
  const char* q = "list pts by id: int { v: int = 0 }\nevent fill() {\n for i in 0 .. 4 { pts[i].v = i + 1 }\n}\n"
                  "event sum() {\n var t = 0\n for p in pts { t = (t * 31 + p.v) % 1000003 }\n}\n"
                  "fn main() {\n fill()\n let m = list by k: int { v: int = 0 }\n m[3].v = 4\n m[5].v = 6\n var t = 0\n"
                  " for r in 0 .. 20 {\n  let s = sum()\n  for x in m { t = (t * 31 + x.v * r) % 1000003 }\n }\n print(t)\n}\n";
  pure::jit::Jit by_default2(pure::jit::native_backend(), o);
  Run e = run(q, &by_default2);
  check_same(run(q, nullptr), e);
  CHECK(e.compiled == 0);
  CHECK(e.rejected == 4);  // fill, sum's walk, main's walk of m and main's loop that holds it
}

TEST_CASE("jit: an ITER_NEXT whose loop index does not fit in its C is never counted; its loop stays interpreted") {
  // 65600 loops in functions before main (never run), so main's walk of pts has a
  // program-wide index past 16 bits: its ITER_NEXT carries kNoLoopIndex, no loop's counter,
  // parked for ever
  std::string p;
  for (int f = 0; f < 656; ++f) {
    p += "fn f" + std::to_string(f) + "(n: int) -> int {\n var t = 0\n";
    for (int l = 0; l < 100; ++l) p += " for i in 0 .. n { t += i }\n";
    p += " return t\n}\n";
  }
  p += "list pts by id: int { v: int = 0 }\nevent fill() {\n for i in 0 .. 4 { pts[i].v = i + 1 }\n}\n"
       "fn main() {\n fill()\n var t = 0\n for r in 0 .. 20 {\n  for p in pts { t = (t * 31 + p.v * r) % 1000003 }\n }\n"
       " print(t)\n}\n";
  using namespace pure;
  pure::jit::Options o;
  o.threshold = 0;
  o.synchronous = true;
  o.min_native_share = 0;
  pure::jit::Jit jit(pure::jit::native_backend(), o);
  vm::RunOptions options;
  options.tier = &jit;
  int far_heads = 0;
  uint8_t walk_state = 255, outer_state = 255;
  uint32_t walk_hits = 1;
  test::TextRun r = test::run_text(p, options, {}, [&](const vm::Program& program) {
    const vm::Function& main = program.functions[static_cast<size_t>(program.main)];
    for (uint32_t pc = 0; pc < main.code.size(); ++pc) {
      const vm::Instr& in = main.code[pc];
      if (in.op != ir::Op::ITER_NEXT || in.c != vm::kNoLoopIndex) continue;
      ++far_heads;
      for (const vm::BlockInfo& b : main.blocks)
        if (pc >= b.start_pc && pc < b.end_pc && b.loop >= 0) {
          const vm::LoopInfo& walk = main.loops[static_cast<size_t>(b.loop)];
          CHECK(walk.index > 0xFFFF);
          CHECK_FALSE(vm::heads_loop(main, in, static_cast<uint32_t>(b.loop)));
          walk_state = walk.state.load();
          walk_hits = walk.hits.load();
          REQUIRE(walk.parent >= 0);
          outer_state = main.loops[static_cast<size_t>(walk.parent)].state.load();
        }
    }
  });
  CHECK(r.compile_errors == "");
  CHECK(far_heads == 1);
  CHECK(walk_state == static_cast<uint8_t>(vm::LoopState::Interpreted));  // never hot on its own
  CHECK(walk_hits == 0);                                                 // never counted
  CHECK(outer_state == static_cast<uint8_t>(vm::LoopState::Compiled));   // the loop around it is
  CHECK(!r.failure);
  CHECK(r.output == run(p, nullptr).output);
  CHECK(r.output == both(p).output);
}

// Stored lists of several leaves (the runs end mid-walk), rows of 1 to 3 cells, whole lists and
// prefix slices, walked in main (its own snapshot) and in a query (the query's snapshot).
const char* kWalks = R"(list pts by id: int { v: int = 0, w: int = 0 }
list edges by (src: int, dst: int) {}
list keys by k: int {}
list journal seq { amount: int }
event fill(n: int) {
  for i in 0 .. n {
    journal.push({ amount: i % 11 })
    pts[i].v = i * 3 + 1
    pts[i].w = i % 7
    edges[i % 13, i] = {}
    keys[i * 2] = {}
  }
}
query walk(k: int) -> int {
  var t = 0
  for p in pts { t = (t * 31 + p.v * k + p.w + p.id) % 1000003 }
  for e in edges[k] { t = (t * 7 + e.dst - e.src) % 1000003 }
  for x in keys { t = (t + x.k) % 1000003 }
  return t
}
fn main() {
  fill(3000)
  var t = 0
  for r in 0 .. 5 {
    for p in pts { t = (t + p.v * r - p.w) % 1000003 }
    for e in edges[r] { t = (t * 3 + e.dst) % 1000003 }
    for i, j in journal { t = (t + i * j.amount) % 1000003 }
    t = (t + walk(r)) % 1000003
  }
  print(t)
}
)";

TEST_CASE("jit: ITER_NEXT over stored lists of several leaves gives the interpreter's rows") {
  Config c;
  c.max_steps = 100'000'000;
  Run r = both(kWalks, c);
  CHECK(!r.failed);
  CHECK(r.compiled >= 6);
  CHECK(r.output == run(kWalks, nullptr, c).output);
}

TEST_CASE("jit: a budget spent inside a compiled ITER_NEXT loop (mid-run, at a leaf's end) stops both engines alike") {
  auto with_budget = [&](uint64_t budget, pure::vm::Tier* tier) {
    Config c;
    c.max_steps = budget;
    return run(kWalks, tier, c);
  };
  // main, fill and each walk() have budgets of their own: fill needs 3000 steps, a walk about
  // 6300, main about 31500. A prime stride lands in main's walks and the query's, on leaves'
  // last rows and runs' first ones.
  int spent = 0, finished = 0;
  for (uint64_t budget = 2990; budget < 36000; budget += 613) {
    CAPTURE(budget);
    Run a = with_budget(budget, nullptr);
    Run b = with_budget(budget, &eager_jit());
    check_same(a, b);
    if (a.failed) CHECK(contains(a.error, "step budget spent"));
    spent += a.failed;
    finished += !a.failed;
  }
  CHECK(spent > 20);
  CHECK(finished > 5);
}

TEST_CASE("jit: a stored list changed while a compiled loop walks it faults as in the interpreter") {
  // inside an event the loop walks the live list: adding or removing a row is an error at the
  // next ITER_NEXT; changing a field is not
  const char* p = R"(list pts by id: int { v: int = 0 }
event fill(n: int) {
  for i in 0 .. n { pts[i].v = i }
}
event grow(at: int) {
  var t = 0
  for p in pts {
    t += p.v
    pts[p.id].v = p.v + 1
    if p.id == at { pts[100000 + at] = { v: 1 } }
  }
}
event shrink(at: int) {
  for p in pts {
    if p.id == at { pts.remove(at + 1) }
  }
}
fn main() {
  fill(1000)
  for at in [0, 5, 500, 998] {
    let a = grow(at)
    let b = shrink(at)
    print("{a.ok} {a.reason} {b.ok} {b.reason}")
  }
  var t = 0
  for p in pts { t += p.v }
  print(t)
}
)";
  Config c;
  c.max_steps = 10'000'000;
  Run r = both(p, c);
  CHECK(!r.failed);
  CHECK(contains(r.output, "was changed (an item added or removed) while a loop was walking it"));
  CHECK(r.compiled >= 3);
}

// A breadth-first search in a query (bench/bfs): the outer loop starts and ends a prefix walk of
// a stored list per node (ST_ITER, ITER_END) and refills its leaf runs (ITER_NEXT), all through
// the runtime calls of jit-common/runtime_calls.h in native code. Nodes without edges (empty
// prefixes), prefixes past the last row and runs that cross leaves are all in it.
const char* kSearch = R"(list edges by (src: int, dst: int) {}
event add(lo: int, hi: int, n: int) {
  for i in lo .. hi {
    if i % 9 != 4 {
      for j in 0 .. i % 5 + 1 { edges[i, (i * 7 + j * 131 + 3) % (n + 3)] = {} }
    }
  }
}
query search(start: int, nodes: int) -> text {
  let depth = repeat(-1, nodes)
  let queue = seq int
  depth[start] = 0
  queue.push(start)
  var head = 0
  var sum = 0
  while head < queue.count() {
    let v = queue[head]
    head += 1
    let d = depth[v]
    sum += d * (v % 13 + 1)
    for e in edges[v] {
      if depth[e.dst] < 0 {
        depth[e.dst] = d + 1
        queue.push(e.dst)
      }
    }
  }
  return "{queue.count()} {sum}"
}
fn main() {
  for c in 0 .. 6 {
    let r = add(c * 100, c * 100 + 100, 600)
    print("{r.ok} {r.reason}")
  }
  for s in [0, 1, 7, 250, 599, 601] { print(search(s, 603)) }
}
)";

TEST_CASE("jit: a BFS query (ST_ITER, leaf-run refills and ITER_END in native code) gives the interpreter's bytes and faults") {
  Config c;
  c.max_steps = 10'000'000;
  Run r = both(kSearch, c);
  CHECK(!r.failed);
  CHECK(r.compiled >= 2);
  CHECK(r.output == run(kSearch, nullptr, c).output);
  CHECK(!contains(r.output, "false"));
  // budgets spent at every kind of instruction of the walk: at a row of a run, at a refill, at
  // the end of a prefix, around ST_ITER and ITER_END (each event and query has a budget of its
  // own: an add needs about 500 steps, a search about 3450, 603 of them for its repeat(-1, 603))
  int spent = 0, finished = 0;
  for (uint64_t budget = 500; budget < 3700; budget += 23) {
    CAPTURE(budget);
    Config b;
    b.max_steps = budget;
    Run x = run(kSearch, nullptr, b);
    Run y = run(kSearch, &eager_jit(), b);
    check_same(x, y);
    if (x.failed) CHECK(contains(x.error, "step budget spent"));
    spent += x.failed;
    finished += !x.failed;
  }
  CHECK(spent > 60);
  CHECK(finished > 3);
}

// The store's flat-form policy for one test: forms on (a 64 MiB budget, built after `seeks`
// prefix seeks) or off (budget 0); the policy before is back when the test ends.
struct FlatFormPolicy {
  explicit FlatFormPolicy(uint64_t seeks) : seeks(seeks) {}
  ~FlatFormPolicy() { pure::rt::store::set_flat_policy(before); }
  void set(uint64_t budget) { pure::rt::store::set_flat_policy({budget, seeks, 1u << 30}); }
  pure::rt::store::FlatPolicy before = pure::rt::store::flat_policy();
  uint64_t seeks;
};

// `text` at the budgets lo, lo + step, ... below hi, three ways: the interpreter with flat forms
// off, then on, then the JIT with them on; all three agree (output, error, steps). With `ended`
// empty a run must finish or spend its budget (no other error). Returns how many runs spent the
// budget, and how many finished (with `ended`: stopped with that error).
std::pair<int, int> flat_budget_sweep(FlatFormPolicy& policy, const char* text, uint64_t lo, uint64_t hi, uint64_t step,
                                      const std::string& ended) {
  int spent = 0, finished = 0;
  for (uint64_t budget = lo; budget < hi; budget += step) {
    CAPTURE(budget);
    Config b;
    b.max_steps = budget;
    policy.set(0);
    Run t = run(text, nullptr, b);
    policy.set(64u << 20);
    Run x = run(text, nullptr, b);
    Run y = run(text, &eager_jit(), b);
    check_same(t, x);
    check_same(x, y);
    bool out = contains(x.error, "step budget spent");
    bool end = ended.empty() ? !x.failed : contains(x.error, ended);
    if (ended.empty() && x.failed) CHECK(out);  // no error but the budget
    spent += out;
    finished += end;
  }
  return {spent, finished};
}

// The same BFS with the snapshot's flat form (runtime/store_flat.h) built after 200 prefix seeks:
// in the first search's walk, so each run has seeks of the tree, the build, and seeks served as
// one run each (no cursor). Both engines, and the interpreter with flat forms off, give the same
// bytes, and stop at the same step and fault at every budget.
TEST_CASE("jit: the BFS query over a flat form built mid-search: the same bytes, steps and faults, flat or not") {
  FlatFormPolicy policy(200);
  Config c;
  c.max_steps = 10'000'000;
  policy.set(0);  // flat forms off: the tree's cursors only
  Run tree = run(kSearch, nullptr, c);
  policy.set(64u << 20);
  uint64_t builds = pure::rt::store::flat_builds();
  Run r = both(kSearch, c);
  CHECK(pure::rt::store::flat_builds() == builds + 2);  // one per engine's run
  CHECK(!r.failed);
  CHECK(r.output == tree.output);
  auto [spent, finished] = flat_budget_sweep(policy, kSearch, 500, 3700, 37, "");
  CHECK(spent > 40);
  CHECK(finished > 3);
  CHECK(pure::rt::store::flat_builds() > builds + 2);
}

// vm::st_iter's flat-form path (a query's walk of a one-cell prefix, text-free rows, the iterator
// stack with room): nested walks (the inner one's iterator above the outer's, the stack grown by
// the general path first), a walk left by `break` and by `return` mid-run, empty prefixes and keys
// past the last row. Flat forms on (built after 50 seeks, in the first query) and off give the
// same bytes in both engines, and the same step and fault at every budget.
const char* kNestedWalks = R"(list edges by (src: int, dst: int) { w: int = 0 }
event add(n: int) {
  for i in 0 .. n {
    if i % 7 != 3 {
      for j in 0 .. i % 4 + 1 { edges[i, (i * 5 + j * 17 + 1) % n] = { w: i * j % 11 } }
    }
  }
}
query first_heavy(v: int) -> int {
  for e in edges[v] {
    if e.w > 6 { return e.dst }
  }
  return -1
}
query walks(lo: int, hi: int) -> int {
  var t = 0
  for v in lo .. hi {
    for e in edges[v] {
      t = (t * 3 + e.dst + e.w) % 1000003
      for f in edges[e.dst] {
        if f.w == 5 { break }
        t = (t + f.dst * 7 + f.w) % 1000003
      }
    }
    for e in edges[v + 1000] { t += 1 }
  }
  return t
}
fn main() {
  let r = add(400)
  print("{r.ok}")
  var t = 0
  for k in 0 .. 40 { t = (t * 11 + first_heavy(k * 9 % 400) + 2) % 1000003 }
  print(t)
  print(walks(0, 200))
  print(walks(150, 420))
}
)";

TEST_CASE("jit: nested, broken-off and returned-from prefix walks of a query over a flat form: the same bytes, steps and faults") {
  FlatFormPolicy policy(50);
  Config c;
  c.max_steps = 10'000'000;
  policy.set(0);  // flat forms off: the tree's cursors only
  Run tree = run(kNestedWalks, nullptr, c);
  CHECK(!tree.failed);
  policy.set(64u << 20);
  uint64_t builds = pure::rt::store::flat_builds();
  Run r = both(kNestedWalks, c);
  CHECK(pure::rt::store::flat_builds() > builds);
  CHECK(!r.failed);
  CHECK(r.output == tree.output);
  CHECK(r.compiled >= 3);
  auto [spent, finished] = flat_budget_sweep(policy, kNestedWalks, 100, 4000, 193, "");
  CHECK(spent > 5);
  CHECK(finished > 3);
}

// The AArch64 JIT walks a flat form's prefix without an iterator (jit-aarch64/a64_walks.cpp,
// plan_walks) and makes the iterator only when it leaves in the middle of a walk: here at a call
// in the walk's body (the interpreter goes on with the walk, and the inner loop's native code
// takes it up again), at a division by zero, at `return` and at every budget. Flat forms on
// (built after 50 seeks, in the first query) and off give the same bytes in both engines.
const char* kWalksLeft = R"(list edges by (src: int, dst: int) { w: int = 0 }
event add(n: int) {
  for i in 0 .. n {
    for j in 0 .. i % 5 + 1 { edges[i, (i * 7 + j * 13 + 1) % n] = { w: (i + j) % 9 } }
  }
}
fn mix(t: int, x: int) -> int {
  var r = t
  for k in 0 .. 2 { r = (r * 3 + x + k) % 1000003 }
  return r
}
query walk_calls(lo: int, hi: int) -> int {
  var t = 0
  for v in lo .. hi {
    for e in edges[v] {
      if e.w == 4 { t = mix(t, e.dst) } else { t = (t * 5 + e.dst + e.w) % 1000003 }
    }
  }
  return t
}
query first_far(lo: int, hi: int, far: int) -> int {
  for v in lo .. hi {
    for e in edges[v] {
      if e.dst - v > far { return e.dst * 1000 + v }
    }
  }
  return -1
}
query walk_divide(lo: int, hi: int, bad: int) -> int {
  var t = 0
  for v in lo .. hi {
    for e in edges[v] { t = (t + 100000 / (e.dst - bad)) % 1000003 }
  }
  return t
}
fn main() {
  let r = add(300)
  print("{r.ok}")
  print(walk_calls(0, 300))
  print(walk_calls(100, 300))
  for f in [250, 200, 150, 100] { print(first_far(0, 300, f)) }
  print(walk_divide(0, 300, -1))
  print(walk_divide(0, 300, 77))
}
)";

// A program that ends in a fault, run with flat forms off (the tree's cursors, interpreted: the
// reference), then on by both engines: the same output and error, flat forms built, at least
// `compiled` loops compiled; then the step-budget sweep lo..hi by step (flat_budget_sweep), with
// more than `min_spent` budgets spent and more than 3 runs ending in `ended`.
void check_walks_against_tree(const char* program, const char* error, const char* output, int compiled, uint64_t lo,
                              uint64_t hi, uint64_t step, const char* ended, int min_spent) {
  FlatFormPolicy policy(50);
  Config c;
  c.max_steps = 10'000'000;
  policy.set(0);  // flat forms off: the tree's cursors only
  Run tree = run(program, nullptr, c);
  CHECK(tree.failed);
  CHECK(contains(tree.error, error));
  CHECK(contains(tree.output, output));
  policy.set(64u << 20);
  uint64_t builds = pure::rt::store::flat_builds();
  Run r = both(program, c);
  CHECK(pure::rt::store::flat_builds() > builds);
  CHECK(r.output == tree.output);
  CHECK(r.error == tree.error);
  CHECK(r.compiled >= compiled);
  auto [spent, finished] = flat_budget_sweep(policy, program, lo, hi, step, ended);
  CHECK(spent > min_spent);
  CHECK(finished > 3);
}

TEST_CASE("jit: prefix walks left in the middle (a call, a fault, return, the budget) over a flat form: the same bytes and faults") {
  check_walks_against_tree(kWalksLeft, "division by zero", "true\n", 4, 100, 6000, 151, "division by zero", 5);
}

// The AArch64 JIT keeps the one walk of a loop in registers (its cursor written to the frame only
// where code leaves or calls), loads only the row's cells some instruction reads before they are
// written again, and in a loop's second version keeps the count and cells of a list nothing in the
// loop replaces or pushes onto in registers (jit-aarch64/a64_slots.cpp, plan_registers): BFS (e.src
// read nowhere), a list read in the walk and pushed onto under another name (new rows past the
// count it read), a list slot the walk replaces (never kept), e.src read only after a `break`, and
// a position out of range of a kept list (its fault). Flat forms on and off, both engines, every
// budget: the same bytes, steps and faults.
const char* kWalkRegisters = R"(list edges by (src: int, dst: int) { w: int = 0 }
event add(lo: int, hi: int, n: int) {
  for i in lo .. hi {
    for j in 0 .. i % 6 + 1 { edges[i, (i * 11 + j * 7 + 3) % n] = { w: (i * j + i) % 5 } }
  }
}
query search(start: int, nodes: int) -> text {
  let depth = repeat(-1, nodes)
  let queue = seq int
  depth[start] = 0
  queue.push(start)
  var head = 0
  var depth_sum = 0
  while head < queue.count() {
    let v = queue[head]
    head += 1
    let d = depth[v]
    depth_sum += d
    for e in edges[v] {
      if depth[e.dst] < 0 {
        depth[e.dst] = d + 1
        queue.push(e.dst)
      }
    }
  }
  return "{queue.count()} {depth_sum}"
}
query grow(n: int) -> int {
  let seen = repeat(0, 8)
  let more = seen
  var t = 0
  var v = 0
  while v < n {
    for e in edges[v] {
      if e.dst < seen.count() { t = (t * 3 + seen[e.dst] + e.w) % 1000003 }
      seen[e.dst % 8] = seen[e.dst % 8] + 1
      if e.w == 2 { more.push(e.dst + v) }
    }
    v += 1
  }
  var h = 0
  for k in 0 .. seen.count() { h = (h * 31 + seen[k]) % 1000003 }
  return (t * 1000 + seen.count()) * 1000003 + h
}
query swap(n: int) -> int {
  let a = repeat(1, 50)
  let b = repeat(2, 50)
  var cur = a
  var t = 0
  var v = 0
  while v < n {
    for e in edges[v] {
      t = (t * 7 + cur[e.dst % 50] + e.src) % 1000003
      if e.w == 1 { cur = b } else { cur = a }
      cur[e.dst % 50] = t % 100
    }
    v += 1
  }
  return t * 10000 + a[7] * 100 + b[9]
}
query first_src(n: int) -> int {
  var t = 0
  var v = 0
  while v < n {
    var last = -1
    for e in edges[v] {
      if e.w == 3 {
        last = e.src
        break
      }
    }
    t = (t * 5 + last + 2) % 1000003
    v += 1
  }
  return t
}
query outside(n: int, size: int) -> int {
  let d = repeat(0, size)
  var t = 0
  var v = 0
  while v < n {
    for e in edges[v] {
      t += d[e.dst] + 1
      d[e.dst] = t % 7
    }
    v += 1
  }
  return t
}
fn main() {
  for k in 0 .. 6 {
    let r = add(k * 50, k * 50 + 50, 300)
    print("{r.ok}")
  }
  print(search(0, 300))
  print(search(17, 300))
  print(grow(300))
  print(swap(300))
  print(first_src(300))
  print(outside(300, 300))
  print(outside(300, 250))
}
)";

TEST_CASE("jit: walks with their cursor in registers and lists kept in registers: the same bytes, steps and faults") {
  check_walks_against_tree(kWalkRegisters, "index 255 is out of range for a sequence of 250 items",
                           "200 1058\n250 1032\n541194822257755\n9878248459\n754078\n3231\n", 6, 300, 2100, 29,
                           "out of range", 30);
}

TEST_CASE("jit: .range over text keys in compiled loops (main, a query, an event; either way; nested, broken off): the interpreter's bytes") {
  // issue 37, item 7: ST_ITER's bounds are text slots; the walk's rows hold texts, so ITER_NEXT
  // takes the cursor's path
  const char* p = R"(list sales by (day: text, id: int) { amount: int }
list shops by (shop: int, day: text) { amount: int }
event fill(n: int) {
  for i in 0 .. n {
    let day = "2026-{10 + i % 4}-{10 + i % 19}"
    sales[day, i] = { amount: i % 17 }
    shops[i % 3, day] = { amount: i % 5 }
  }
}
event bump(m: text) {
  for s in sales.range(m, m + "~") { sales[s.day, s.id].amount = s.amount + 1 }
}
query month(m: text) -> int {
  var t = 0
  for s in sales.range(m, m + "~").reverse() { t = (t * 7 + s.amount + s.id) % 1000003 }
  for s in shops[1].range(m, m + "~") { t = (t * 3 + s.amount) % 1000003 }
  return t
}
fn main() {
  let f = fill(400)
  var t = 0
  for r in 0 .. 30 {
    let m = "2026-{10 + r % 5}"
    for s in sales.range(m, m + "~") {
      t = (t * 31 + s.amount * r + s.id) % 1000003
      if s.id > 350 + r { break }
    }
    for s in shops[r % 4].range("2026-11", "2026-13").reverse() { t = (t * 5 + s.amount) % 1000003 }
    t = (t + month(m)) % 1000003
    if r % 7 == 0 { let b = bump(m) }
  }
  print(t)
  print(sales.range("2026-12", "2026-13").count())
}
)";
  Run r = both(p);
  CHECK(r.output != "");
  CHECK(r.compiled > 0);
}
