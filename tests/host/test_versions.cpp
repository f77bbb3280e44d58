// tests/host/test_versions.cpp — module versions in a data directory (host/versions.h): version
// files, upgrade plans, the schema transform, and every fault point of an upgrade on the
// fault-injecting file system: a crash anywhere leaves the old version or the new one, never a
// mix, and an acknowledged upgrade is never undone.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <span>

#include "fault_support.h"
#include "host/file_fault.h"
#include "host/versions.h"
#include "host_test_support.h"

using namespace host_test;

namespace {

ColumnSpec column(std::string name, rt::ColType type, std::string was = "", uint64_t def = 0, std::string text = "") {
  ColumnSpec c;
  c.name = std::move(name);
  c.type = type;
  c.was = std::move(was);
  c.default_bits = def;
  c.default_text = std::move(text);
  return c;
}

ListSpec list(std::string name, bool sequence, uint32_t keys, std::vector<ColumnSpec> cols, std::string was = "") {
  ListSpec l;
  l.name = std::move(name);
  l.sequence = sequence;
  l.key_count = keys;
  l.cols = std::move(cols);
  l.was = std::move(was);
  return l;
}

// Version 1: the support module's lists (accounts: id -> balance, note; history: key, note).
SchemaSpec schema_v1() {
  return {list("accounts", false, 1,
               {column("id", rt::ColType::Int), column("balance", rt::ColType::Int), column("note", rt::ColType::Text)}),
          list("history", true, 0, {column("key", rt::ColType::Int), column("note", rt::ColType::Text)})};
}

// Version 2: accounts gains `level: int = 7` and `tag: text = "new"`, its balance is renamed
// `amount was balance`; history is renamed `journal was history`.
SchemaSpec schema_v2() {
  return {list("accounts", false, 1,
               {column("id", rt::ColType::Int), column("amount", rt::ColType::Int, "balance"),
                column("note", rt::ColType::Text), column("level", rt::ColType::Int, "", 7),
                column("tag", rt::ColType::Text, "", 0, "new")}),
          list("journal", true, 0, {column("key", rt::ColType::Int), column("note", rt::ColType::Text)}, "history")};
}

// Version 2's events: as version 1's, but a put writes the two new columns too (level = key).
std::string apply_v2(rt::Store& store, const LogRecord& r) {
  if (r.event != kPut) return apply_event(store, r);
  std::string_view a = r.args;
  if (a.size() < 16) return "put needs 16 bytes";
  int64_t key = static_cast<int64_t>(get64(a.data()));
  store.begin();
  rt::Text* note = rt::text_new(a.substr(16));
  rt::Text* tag = rt::text_new("v2");
  rt::Cell row[5] = {static_cast<rt::Cell>(key), get64(a.data() + 8), text_cell(note), static_cast<rt::Cell>(key),
                     text_cell(tag)};
  store.list(0).put(row);
  rt::text_release(note);
  rt::text_release(tag);
  rt::Text* line = rt::text_new("put2");
  rt::Cell fields[2] = {static_cast<rt::Cell>(key), text_cell(line)};
  store.list(1).append(fields);
  rt::text_release(line);
  store.commit();
  return "";
}

// Version 3 (a migration): version 1's lists, and a migrate block that doubles every balance and
// notes itself in history; "three fails" is the same block failing. Lists of the store it runs
// on: 0 accounts, 1 history (the new ones), 2 and 3 the old ones.
std::string migrate_v3(rt::Store& both) {
  REQUIRE(both.list_count() == 4);
  both.begin();
  for (auto c = both.list(2).scan(); c->valid(); c->next()) {
    const rt::Cell* old = c->row();
    rt::Cell row[3] = {old[0], old[1] * 2, old[2]};
    both.list(0).put(row);
  }
  rt::Text* t = rt::text_new("migrated");
  rt::Cell fields[2] = {static_cast<rt::Cell>(both.list(3).count()), text_cell(t)};
  both.list(1).append(fields);
  rt::text_release(t);
  both.commit();
  return "";
}

Status compile(uint32_t, const std::string& source, VersionCode* out) {
  if (source == "three" || source == "three fails") {
    out->schema = schema_v1();
    out->apply = apply_event;
    bool fails = source == "three fails";
    out->migration = [fails](const SchemaSpec& from, Migration* m) -> Status {
      CHECK(from.size() == 2);
      m->run = [fails](rt::Store& both, uint64_t, std::string*) -> std::string { return fails ? "the block says no" : migrate_v3(both); };
      return {};
    };
  } else if (source == "one") {
    out->schema = schema_v1();
    out->apply = apply_event;
  } else if (source == "two") {
    out->schema = schema_v2();
    out->apply = apply_v2;
  } else {
    return Status::failure("unknown source '" + source + "'");
  }
  return {};
}

VersionedOptions versioned(const std::string& source, bool upgrade) {
  VersionedOptions v;
  v.module = "bank";
  v.source = source;
  REQUIRE(compile(0, source, &v.code).ok());
  v.compile = compile;
  v.upgrade = upgrade;
  return v;
}

OpenOptions base_options() {
  OpenOptions o;
  o.log.segment_bytes = 160;  // small: segments roll during the workload
  return o;
}

// The state after `sequences` log records, with the upgrade record at sequence `upgrade_at`
// (0: none): events 1..upgrade_at-1 by version 1, then the transform, then version 2's.
// `target`: the version 2 source the workload upgrades to ("two", or "three": a migration).
std::string reference(uint64_t sequences, uint64_t upgrade_at, const std::string& target = "two") {
  std::unique_ptr<rt::Store> store = rt::make_store(VersionCode{schema_v1()}.schemas());
  VersionCode one, next;
  REQUIRE(compile(1, "one", &one).ok());
  REQUIRE(compile(2, target, &next).ok());
  uint64_t event = 1;
  for (uint64_t seq = 1; seq <= sequences; ++seq) {
    if (seq == upgrade_at) {
      REQUIRE(upgrade_version(one, next, &store).ok());
      continue;
    }
    Event e = workload_event(event++);
    (upgrade_at && seq > upgrade_at ? next.apply : one.apply)(*store, LogRecord{seq, e.event, e.args});
  }
  return dump(*store);
}

// Applies workload events first..last (their log sequences follow the log's) and appends them.
uint64_t submit_events(OpenedModule& m, const ApplyEvent& apply, uint64_t first, uint64_t last) {
  std::vector<Event> events;
  std::vector<EventIn> in;
  for (uint64_t i = first; i <= last; ++i) events.push_back(workload_event(i));
  for (uint64_t i = first; i <= last; ++i) {
    const Event& e = events[i - first];
    apply(*m.store, LogRecord{0, e.event, e.args});
    in.push_back({e.event, e.args});
  }
  return m.log->append(in);
}

struct Outcome {
  uint64_t acknowledged = 0;   // the last sequence acknowledged
  uint64_t submitted = 0;      // the last sequence appended
  uint64_t upgrade_at = 0;     // the upgrade record's sequence, once open_versioned returned it
  bool upgrade_acknowledged = false;
};

// Version 1 with events and a checkpoint; the upgrade to version 2 (source `target`); events and
// a checkpoint.
Outcome run_workload(FaultFileSystem& fs, const std::string& target = "two") {
  Outcome out;
  uint64_t event = 1;
  {
    OpenedModule m;
    VersionedReport r;
    if (!open_versioned(fs, "/data", base_options(), versioned("one", false), &m, &r).ok()) return out;
    for (int batch : {3, 4}) {
      uint64_t last = submit_events(m, apply_event, event, event + batch - 1);
      if (last == 0) return (void)m.log->close(), out;
      event += batch;
      out.submitted = last;
      if (!m.log->wait_durable(last)) return (void)m.log->close(), out;
      out.acknowledged = last;
      (void)write_checkpoint(fs, "/data", r.history.front().identity, *m.store->publish(), last, m.log.get());
    }
    if (!m.log->close().ok()) return out;
  }
  OpenedModule m;
  VersionedReport r;
  out.submitted += 1;  // the upgrade record, if it is appended
  VersionedOptions upgrading = versioned(target, true);
  const ApplyEvent apply_next = upgrading.code.apply;
  if (!open_versioned(fs, "/data", base_options(), std::move(upgrading), &m, &r).ok()) return out;
  REQUIRE(r.upgraded);
  out.upgrade_at = r.version_begins;
  out.upgrade_acknowledged = true;
  out.acknowledged = out.upgrade_at;
  for (int batch : {2, 5}) {
    uint64_t last = submit_events(m, apply_next, event, event + batch - 1);
    if (last == 0) break;
    event += batch;
    out.submitted = last;
    if (!m.log->wait_durable(last)) break;
    out.acknowledged = last;
    (void)write_checkpoint(fs, "/data", r.history.front().identity, *m.store->publish(), last, m.log.get());
  }
  (void)m.log->close();  // under an injected fault it may fail: recovery is what is checked
  return out;
}

}  // namespace

TEST_CASE("a version file round-trips, and damage is named") {
  VersionFile v;
  v.number = 3;
  v.module = "bank";
  v.identity = 0x1234abcd5678ef90ull;
  v.begins = 42;
  v.source = "list a seq { x: int }\n// ünïcode\n";
  std::string bytes = encode_version_file(v);
  VersionFile back;
  REQUIRE(decode_version_file(bytes, &back) == "");
  CHECK(back.number == 3);
  CHECK(back.module == "bank");
  CHECK(back.identity == v.identity);
  CHECK(back.begins == 42);
  CHECK(back.source == v.source);
  std::string damaged = bytes;
  damaged[damaged.size() - 3] ^= 1;
  CHECK(decode_version_file(damaged, &back) == "the source's checksum does not match");
  CHECK(decode_version_file(bytes.substr(0, bytes.size() - 1), &back).find("the header says") != std::string::npos);
  CHECK(decode_version_file("hello\n", &back).find("not a version file") != std::string::npos);
  CHECK(version_file_name(12) == "version-0000000012.src");
}

TEST_CASE("plans: added, renamed, dropped, refused") {
  UpgradePlan same = plan_upgrade(schema_v1(), schema_v1(), nullptr);
  CHECK_FALSE(same.schema_changed);
  CHECK_FALSE(same.drops);
  CHECK(same.refused.empty());

  UpgradePlan up = plan_upgrade(schema_v1(), schema_v2(), nullptr);
  CHECK(up.schema_changed);
  CHECK_FALSE(up.drops);
  CHECK(up.refused.empty());
  REQUIRE(up.lines.size() == 2);
  CHECK(up.lines[0] ==
        "accounts: 0 rows: field renamed: balance -> amount; field added: level: int = 7; field added: tag: text = \"new\"");
  CHECK(up.lines[1] == "journal: 0 rows: renamed from history");

  // Back from version 2 to version 1's names without `was`: fields and a list are dropped.
  UpgradePlan down = plan_upgrade(schema_v2(), schema_v1(), nullptr);
  CHECK(down.drops);
  CHECK(down.render().find("field dropped: amount") != std::string::npos);
  CHECK(down.render().find("journal: list dropped (0 rows lost)") != std::string::npos);
  CHECK(down.render().find("needs --allow-drop") != std::string::npos);
  // The same drops, read by a migrate block: migrated, not lost; what it does not read stays a drop.
  std::vector<std::string> reads = {"accounts", "accounts.amount", "journal"};
  UpgradePlan consumed = plan_upgrade(schema_v2(), schema_v1(), nullptr, true, &reads);
  CHECK(consumed.render().find("field migrated: amount (read by the migrate block, then not kept)") != std::string::npos);
  CHECK(consumed.render().find("journal: list migrated: read by the migrate block as old.journal (0 rows), then not kept") !=
        std::string::npos);
  CHECK(consumed.render().find("field dropped: level") != std::string::npos);  // not read: still lost
  CHECK(consumed.drops);
  reads = {"journal"};
  CHECK(plan_upgrade(schema_v2(), schema_v1(), nullptr, true, &reads).drops);

  SchemaSpec retyped = schema_v1();
  retyped[0].cols[1].type = rt::ColType::Num;
  CHECK(plan_upgrade(schema_v1(), retyped, nullptr).refused ==
        "accounts.balance changes type from int to num: that needs a migrate block (docs/upgrades.md, \"Migrations\") "
        "or a new field instead");
  // With a migrate block the list is rebuilt by it instead: it starts empty, nothing is refused.
  UpgradePlan migrated = plan_upgrade(schema_v1(), retyped, nullptr, true);
  CHECK(migrated.refused.empty());
  CHECK(migrated.schema_changed);
  CHECK(migrated.rebuilt == std::vector<std::string>{"accounts"});
  CHECK(migrated.render().find("accounts: 0 rows: rebuilt by the migrate block (accounts.balance changes type from "
                               "int to num): starts empty, the old rows are old.accounts") != std::string::npos);
  SchemaSpec rekeyed = schema_v1();
  rekeyed[0].cols[0].type = rt::ColType::Text;
  CHECK(plan_upgrade(schema_v1(), rekeyed, nullptr).refused.find("accounts's key id changes type") == 0);
  SchemaSpec twice = schema_v1();  // `copy was balance` while balance stays
  twice[0].cols.push_back(column("copy", rt::ColType::Int, "balance"));
  CHECK(plan_upgrade(schema_v1(), twice, nullptr).refused ==
        "accounts.copy was balance, but balance is still a field of accounts");
  SchemaSpec reshaped = schema_v1();
  reshaped[1].sequence = false;
  reshaped[1].key_count = 1;
  CHECK(plan_upgrade(schema_v1(), reshaped, nullptr).refused.find("history changes from a sequence to a keyed list") ==
        0);
}

TEST_CASE("the transform keeps every row: renamed values moved, defaults in added fields") {
  std::unique_ptr<rt::Store> store = rt::make_store(VersionCode{schema_v1()}.schemas());
  for (uint64_t i = 1; i <= 30; ++i) {
    Event e = workload_event(i);
    apply_event(*store, LogRecord{i, e.event, e.args});
  }
  std::unique_ptr<rt::Store> next;
  REQUIRE(transform_store(schema_v1(), schema_v2(), *store, &next).ok());
  REQUIRE(next->list_count() == 2);
  CHECK(next->list(0).count() == store->list(0).count());
  CHECK(next->list(1).count() == store->list(1).count());
  CHECK(next->list(1).schema().name == "journal");
  auto a = store->list(0).scan();
  auto b = next->list(0).scan();
  for (; a->valid(); a->next(), b->next()) {
    REQUIRE(b->valid());
    const rt::Cell* old_row = a->row();
    const rt::Cell* new_row = b->row();
    CHECK(new_row[0] == old_row[0]);  // id
    CHECK(new_row[1] == old_row[1]);  // amount was balance
    CHECK(reinterpret_cast<const rt::Text*>(new_row[2])->view() == reinterpret_cast<const rt::Text*>(old_row[2])->view());
    CHECK(new_row[3] == 7);
    CHECK(reinterpret_cast<const rt::Text*>(new_row[4])->view() == "new");
  }
  CHECK_FALSE(b->valid());
}

TEST_CASE("upgrade_store without the migrate block a change needs refuses it, never carries the cells over") {
  // pure-run --as-of once replayed an upgrade without its migrate block: the plan refused the type
  // change, said nothing changed, and the int cells were read as nums
  std::unique_ptr<rt::Store> store = rt::make_store(VersionCode{schema_v1()}.schemas());
  Event e = workload_event(1);
  apply_event(*store, LogRecord{1, e.event, e.args});
  SchemaSpec retyped = schema_v1();
  retyped[0].cols[1].type = rt::ColType::Num;
  rt::Store* before = store.get();
  Status s = upgrade_store(schema_v1(), retyped, &store);
  CHECK_FALSE(s.ok());
  CHECK(s.error.find("accounts.balance changes type from int to num: that needs a migrate block") == 0);
  CHECK(store.get() == before);  // left as it was
  CHECK(upgrade_store(schema_v1(), schema_v1(), &store).ok());  // nothing to change: nothing done
  CHECK(store.get() == before);
}

TEST_CASE("versions on disk: upgrade, replay through both versions, refusals naming both") {
  FaultFileSystem fs;
  Outcome clean = run_workload(fs);
  REQUIRE(clean.upgrade_acknowledged);
  REQUIRE(clean.acknowledged == 15);  // 7 events, the upgrade record, 7 events
  CHECK(clean.upgrade_at == 8);
  std::vector<VersionFile> history;
  REQUIRE(read_versions(fs, "/data", &history).ok());
  REQUIRE(history.size() == 2);
  CHECK(history[1].begins == 8);

  OpenedModule m;
  VersionedReport r;
  REQUIRE(open_versioned(fs, "/data", base_options(), versioned("two", false), &m, &r).ok());
  CHECK(r.version == 2);
  CHECK_FALSE(r.needs_upgrade);
  CHECK(dump(*m.store) == reference(15, 8));
  REQUIRE(m.log->close().ok());

  // The old source cannot continue the directory.
  Status s = open_versioned(fs, "/data", base_options(), versioned("one", false), &m, &r);
  CHECK(s.error.find("this source is version 1 of the directory, which has been upgraded to version 2 since sequence 8") !=
        std::string::npos);
  // Another module's name is refused.
  VersionedOptions other = versioned("two", false);
  other.module = "shop";
  s = open_versioned(fs, "/data", base_options(), std::move(other), &m, &r);
  CHECK(s.error == "/data: this data directory belongs to module 'bank' (version 2), not to 'shop': a directory keeps "
                   "one module's state");
  // A version file written by a later format is refused, naming both formats.
  std::string bytes;
  REQUIRE(read_file(fs, "/data/" + version_file_name(2), &bytes).ok());
  VersionFile later;
  REQUIRE(decode_version_file(bytes, &later) == "");
  later.format = kDataFormat + 1;
  {
    std::unique_ptr<File> f;
    REQUIRE(fs.open("/data/" + version_file_name(2), OpenMode::Create, &f).ok());
    std::string out = encode_version_file(later);
    REQUIRE(f->append(out.data(), out.size()).ok());
  }
  s = open_versioned(fs, "/data", base_options(), versioned("two", false), &m, &r);
  CHECK(s.error.find("was written in data format 2, and this build reads format 1") != std::string::npos);
}

TEST_CASE("a versioned directory whose version files are gone is refused as such, not as one from before versions") {
  FaultFileSystem fs;
  Outcome clean = run_workload(fs);
  REQUIRE(clean.upgrade_acknowledged);
  std::vector<VersionFile> history;
  REQUIRE(read_versions(fs, "/data", &history).ok());
  REQUIRE(history.size() == 2);
  for (const VersionFile& v : history) REQUIRE(fs.unlink("/data/" + version_file_name(v.number)).ok());
  OpenedModule m;
  VersionedReport r;
  Status s = open_versioned(fs, "/data", base_options(), versioned("two", false), &m, &r);
  CHECK(s.error.find("/data: the state here was written under versions by module 'bank', but its version files "
                     "(version-*.src) are missing; nothing was changed") == 0);
  CHECK(s.error.find("run it once with the source that wrote it") == std::string::npos);
  // Nothing was written: still no version files.
  REQUIRE(read_versions(fs, "/data", &history).ok());
  CHECK(history.empty());
}

namespace {

// Crashes at every fault point of the workload upgrading to `target`, in each of the modes given:
// the directory recovers to the old version or the new one, never a mix.
void crash_everywhere(const std::string& target, std::span<const CrashMode> crashes) {
  FaultFileSystem clean;
  Outcome full = run_workload(clean, target);
  REQUIRE(full.upgrade_acknowledged);
  const uint64_t points = clean.points();
  REQUIRE(points > 30);
  int runs = 0, old_version = 0, new_version = 0;
  at_every_fault(points, crashes, [&](FaultFileSystem& fs) { return run_workload(fs, target); },
                 [&](FaultFileSystem& fs, const Outcome& outcome) {
    // Opened with the new source, not asking for an upgrade: the directory says which it is.
    OpenedModule m;
    VersionedReport r;
    Status s = open_versioned(fs, "/data", base_options(), versioned(target, false), &m, &r);
    REQUIRE_MESSAGE(s.ok(), s.error);
    if (r.created) {  // the crash came before version 1's file was durable: nothing was
      CHECK(outcome.acknowledged == 0);
      REQUIRE(m.log->close().ok());
      ++runs;
      return;
    }
    uint64_t k = m.report.last_sequence;
    CHECK(k >= outcome.acknowledged);
    CHECK(k <= outcome.submitted);
    std::vector<VersionFile> history;
    REQUIRE(read_versions(fs, "/data", &history).ok());
    if (r.version == 2) {
      ++new_version;
      CHECK_FALSE(r.needs_upgrade);
      REQUIRE(history.size() == 2);
      uint64_t at = history[1].begins;
      CHECK(at <= k);
      CHECK(dump(*m.store) == reference(k, at, target));
      REQUIRE(m.log->close().ok());
    } else {
      ++old_version;
      REQUIRE(r.version == 1);
      CHECK_FALSE(outcome.upgrade_acknowledged);  // an acknowledged upgrade is never undone
      CHECK(r.needs_upgrade);
      CHECK(history.size() == 1);  // a version file whose record never became durable is gone
      CHECK(dump(*m.store) == reference(k, 0, target));
      CHECK_FALSE(m.log);
      // The upgrade, asked for again, goes through.
      OpenedModule again;
      s = open_versioned(fs, "/data", base_options(), versioned(target, true), &again, &r);
      REQUIRE_MESSAGE(s.ok(), s.error);
      CHECK(r.upgraded);
      CHECK(r.version_begins == k + 1);
      CHECK(dump(*again.store) == reference(k + 1, k + 1, target));
      REQUIRE(again.log->close().ok());
    }
    ++runs;
  });
  MESSAGE(target << ": " << runs << " crash runs over " << points << " fault points: " << old_version
                 << " at the old version, " << new_version << " at the new one");
  CHECK(old_version > 0);
  CHECK(new_version > 0);
}

}  // namespace

TEST_CASE("every fault point of an upgrade: the old version or the new one, never a mix") {
  const CrashMode crashes[] = {{0, false, 0}, {9, true, 0}, {1u << 20, false, 0}, {0, false, 1}, {0, false, 2}};
  crash_everywhere("two", crashes);
}

// A migrate block runs in memory before the version file is written, and again when recovery
// meets the version record: every fault point of an upgrade with one recovers to the old version
// or to the migrated state.
TEST_CASE("every fault point of an upgrade with a migration: the old version or the migrated one") {
  const CrashMode crashes[] = {{0, false, 0}, {9, true, 0}, {1u << 20, false, 0}, {0, false, 1}, {0, false, 2}};
  crash_everywhere("three", crashes);
}

TEST_CASE("a migration that fails leaves the directory at the old version, byte for byte") {
  FaultFileSystem fs;
  {
    OpenedModule m;
    VersionedReport r;
    REQUIRE(open_versioned(fs, "/data", base_options(), versioned("one", false), &m, &r).ok());
    uint64_t last = submit_events(m, apply_event, 1, 6);
    REQUIRE(m.log->wait_durable(last));
    REQUIRE(m.log->close().ok());
  }
  const std::string before = reference(6, 0);
  std::vector<std::string> names_before;
  REQUIRE(fs.list_dir("/data", &names_before).ok());
  OpenedModule m;
  VersionedReport r;
  Status s = open_versioned(fs, "/data", base_options(), versioned("three fails", true), &m, &r);
  CHECK(s.error == "/data: the upgrade to version 2 was not applied: its migrate block failed: the block says no\n"
                   "  nothing was changed: the directory is still at version 1");
  std::vector<std::string> names_after;
  REQUIRE(fs.list_dir("/data", &names_after).ok());
  CHECK(names_after == names_before);
  OpenedModule again;
  REQUIRE(open_versioned(fs, "/data", base_options(), versioned("one", false), &again, &r).ok());
  CHECK(r.version == 1);
  CHECK(dump(*again.store) == before);
  REQUIRE(again.log->close().ok());
  // The block that succeeds: the balances doubled, and so again after a restart (replay runs it).
  OpenedModule up;
  REQUIRE(open_versioned(fs, "/data", base_options(), versioned("three", true), &up, &r).ok());
  CHECK(r.version == 2);
  CHECK(dump(*up.store) == reference(7, 7, "three"));
  CHECK(dump(*up.store) != reference(7, 7, "two"));
  REQUIRE(up.log->close().ok());
  OpenedModule replayed;
  REQUIRE(open_versioned(fs, "/data", base_options(), versioned("three", false), &replayed, &r).ok());
  CHECK(dump(*replayed.store) == reference(7, 7, "three"));
  REQUIRE(replayed.log->close().ok());
}

TEST_CASE("a directory from before versions is adopted by the source that wrote it, and only by it") {
  FaultFileSystem fs;
  // Written the old way: one compiled identity, no version files.
  constexpr uint64_t kCompiled = 0x0123456789abcdefull;
  {
    OpenOptions old = base_options();
    old.module_identity = kCompiled;
    old.schemas = VersionCode{schema_v1()}.schemas();
    old.apply = apply_event;
    OpenedModule m;
    REQUIRE(open_module(fs, "/data", old, &m).ok());
    uint64_t last = submit_events(m, apply_event, 1, 5);
    REQUIRE(m.log->wait_durable(last));
    REQUIRE(m.log->close().ok());
  }
  // Another program (another compiled identity) is refused, with the way out.
  VersionedOptions other = versioned("one", false);
  other.legacy_identity = kCompiled + 1;
  OpenedModule m;
  VersionedReport r;
  Status s = open_versioned(fs, "/data", base_options(), std::move(other), &m, &r);
  CHECK(s.error.find("not by this module") != std::string::npos);
  CHECK(s.error.find("run it once with the source that wrote it") != std::string::npos);
  std::vector<VersionFile> history;
  REQUIRE(read_versions(fs, "/data", &history).ok());
  CHECK(history.empty());
  // The program that wrote it: its source becomes version 1, under the old identity.
  VersionedOptions same = versioned("one", false);
  same.legacy_identity = kCompiled;
  s = open_versioned(fs, "/data", base_options(), std::move(same), &m, &r);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(r.adopted);
  CHECK(r.version == 1);
  CHECK(dump(*m.store) == reference(5, 0));
  REQUIRE(m.log->close().ok());
  REQUIRE(read_versions(fs, "/data", &history).ok());
  REQUIRE(history.size() == 1);
  CHECK(history[0].identity == kCompiled);
  CHECK(history[0].source == "one");
  // From then on it upgrades like any other directory.
  s = open_versioned(fs, "/data", base_options(), versioned("two", true), &m, &r);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(r.upgraded);
  CHECK(dump(*m.store) == reference(6, 6));
  REQUIRE(m.log->close().ok());
}

TEST_CASE("plans: an enum column keeps its values only when members are added at the end") {
  auto with_status = [](std::vector<std::string> members, bool key) {
    ColumnSpec s = column("status", rt::ColType::Int);
    s.members = std::move(members);
    if (key) return SchemaSpec{list("counts", false, 1, {s, column("n", rt::ColType::Int)})};
    return SchemaSpec{list("orders", false, 1, {column("id", rt::ColType::Int), s})};
  };
  for (bool key : {false, true}) {
    CAPTURE(key);
    std::string where = key ? "counts's key status " : "orders.status ";
    SchemaSpec v1 = with_status({"open", "shipped"}, key);
    // a member added at the end: the stored positions mean what they meant, a code-only change
    UpgradePlan grown = plan_upgrade(v1, with_status({"open", "shipped", "cancelled"}, key), nullptr);
    CHECK(grown.refused.empty());
    CHECK_FALSE(grown.drops);
    CHECK_FALSE(grown.schema_changed);
    // reordered, renamed or removed members would change what a stored position means: refused
    for (std::vector<std::string> m : {std::vector<std::string>{"shipped", "open"}, {"open", "sent"}, {"open"},
                                       {"new", "open", "shipped"}}) {
      std::string refused = plan_upgrade(v1, with_status(m, key), nullptr).refused;
      CAPTURE(refused);
      CHECK(refused.find(where + "changes type from enum { open, shipped } to enum { ") == 0);
      CHECK(refused.find("(an enum's stored value is its member's position: members can only be added at the end)") !=
            std::string::npos);
    }
    // an int column becoming an enum (or back) is a change of type
    CHECK(plan_upgrade(with_status({}, key), v1, nullptr).refused.find(where + "changes type from int to enum { open, shipped }") == 0);
    CHECK(plan_upgrade(v1, with_status({}, key), nullptr).refused.find(where + "changes type from enum { open, shipped } to int") == 0);
  }
}
