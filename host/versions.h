// host/versions.h — module versions in a data directory (docs/upgrades.md): a directory belongs to
// a module name, keeps every source the module has run as a numbered version, and its log names
// the version that committed each record, so recovery replays every event with the code that ran
// it. An upgrade is one log record (kVersionEvent), made durable before anything is shown as
// upgraded; the schema change it carries (lists added or dropped, fields added, renamed or
// dropped) is a pure function of the two versions' schemas, so replay and the live upgrade agree.
// Depends on host.h and runtime/store.h.
//
// Files (beside the log, docs/durability.md):
//   version-<N, 10 digits>.src   version N: a short text header, then the source as run. Written
//                                whole (temporary file, fdatasync, rename, directory fsync)
//                                before its version record is appended; one whose record never
//                                became durable is deleted by the next recovery.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/host.h"

namespace pure::host {

// A log record with this event index is no event: it says "from here on, version N" (arguments:
// u32 N, little-endian). Replay switches code and schema there.
inline constexpr uint32_t kVersionEvent = 0xFFFFFFFFu;
// The format of what a directory keeps (the log, checkpoints, version files) as this build writes
// and reads it. A directory written by a later format is refused, naming both.
inline constexpr uint32_t kDataFormat = 1;

// One column of a stored list as the source declares it.
struct ColumnSpec {
  std::string name;
  std::string was;            // `name: T was OLD`: the column's name in the version before ("" none)
  rt::ColType type = rt::ColType::Int;
  uint64_t default_bits = 0;  // Int/Bool/Num cell of the default (the type's zero when none)
  std::string default_text;   // Text columns' default
  std::vector<std::string> members;  // an enum column (type Int): its members in order; a cell is a position
  std::string enum_name;             // an enum column: its enum's name in that version's source
};

// One stored list: its name, an optional former name, and its columns (keys first).
struct ListSpec {
  std::string name;
  std::string was;  // `list NAME was OLD`
  bool sequence = false;
  uint32_t key_count = 0;
  std::vector<ColumnSpec> cols;
  rt::ListSchema schema() const;
};
using SchemaSpec = std::vector<ListSpec>;

// A version's migrate block (docs/upgrades.md, "Migrations") compiled against the schema of the
// version before it. run works on a store whose lists are the new version's (SchemaSpec order),
// then the old version's (read only), with a step budget of max_steps: "" when the block
// committed, else why not (its `fail`, a runtime error, its budget spent), and then it changed
// nothing. What the block prints is appended to *printed (also when it fails); with printed null
// (a replay: the block ran, and printed, once already) it is dropped. The upgrade gives it VersionedOptions::migration_steps; replay, kReplaySteps (it
// finished once: a smaller budget at a restart must not strand the directory).
inline constexpr uint64_t kReplaySteps = uint64_t{INT64_MAX};
struct Migration {
  std::function<std::string(rt::Store& both, uint64_t max_steps, std::string* printed)> run;
  // What the block reads of the old version, sorted: "L" (it names old.L), "L.F" (it reads field F
  // of old.L's rows). A list or field the new version drops but the block reads is migrated, not lost.
  std::vector<std::string> reads;
  std::shared_ptr<void> keep;  // owns what run refers to (the compiled program)
};
// Compiles the migrate block against the old version's schema; the error is the compiler's
// messages (an old list or field that does not exist, a type that does not match).
using CompileMigration = std::function<Status(const SchemaSpec& from, Migration* out)>;

// What one version of the module's source compiles to.
struct VersionCode {
  SchemaSpec schema;
  ApplyEvent apply;            // replays one of its logged events
  std::shared_ptr<void> keep;  // owns what apply refers to (the compiled program)
  CompileMigration migration;  // its migrate block; null when the source has none
  std::vector<rt::ListSchema> schemas() const;
};

// Compiles a version's source (kept in the directory) into its code; the error names what failed.
using CompileVersion = std::function<Status(uint32_t version, const std::string& source, VersionCode* out)>;

// One version file.
struct VersionFile {
  uint32_t number = 0;
  std::string module;
  uint64_t identity = 0;  // the directory's identity (its log, checkpoints and manifest carry it)
  uint64_t begins = 0;    // the sequence of its kVersionEvent record (0: version 1, from the start)
  uint32_t format = kDataFormat;
  std::string source;
};
std::string version_file_name(uint32_t number);
std::string encode_version_file(const VersionFile& v);
// "" when bytes are a version file this build reads, else what is wrong.
std::string decode_version_file(std::string_view bytes, VersionFile* out);

// The identity of a directory made for a module of this name (versions keep it for good).
uint64_t identity_for_module(const std::string& module);

// ---- Upgrade plans ----

// What an upgrade from one schema to another does, list by list.
struct UpgradePlan {
  uint32_t from = 0, to = 0;
  std::vector<std::string> lines;  // one per list, e.g. "accounts: 2 rows: field added: note"
  bool schema_changed = false;
  bool drops = false;              // loses a list or a field: needs consent (--allow-drop)
  std::string refused;             // a change no upgrade can make (a key or type change): why
  bool migration = false;          // the new version's migrate block runs after the changes
  std::vector<std::string> rebuilt;  // migration: new lists that start empty (their change needs it)
  std::string migration_errors;    // refused because the migrate block does not compile: the messages
  std::string render() const;      // the lines, indented, with what consent is needed
};
// rows: the old version's stored state (for row counts); may be null.
// migration: the new version has a migrate block, so a list whose change no upgrade can make by
// itself (a field's or key's type, the key's columns, sequence or keyed) is rebuilt by it instead
// of refused: it starts empty and the block writes its rows.
// consumed: what the migrate block reads (Migration::reads): an old list or field it reads that the
// new version drops is "migrated", not a drop needing consent.
UpgradePlan plan_upgrade(const SchemaSpec& from, const SchemaSpec& to, const rt::Store* rows, bool migration = false,
                         const std::vector<std::string>* consumed = nullptr);

// Builds the store of version `to` from one of version `from`: lists and fields matched by name
// (or by `was`), added fields set to their default, unmatched old lists and fields left behind.
// The plan between them must not be refused.
// With a migration (see plan_upgrade), the lists it rebuilds are left empty.
Status transform_store(const SchemaSpec& from, const SchemaSpec& to, rt::Store& old, std::unique_ptr<rt::Store>* out,
                       bool migration = false);
// The upgrade of a version's store, live and on replay: *store is replaced by transform_store's
// when the schema changes; a code-only upgrade keeps the rows where they are. With a migration
// (run with kReplaySteps),
// the transformed lists and a copy of the old ones go into one store, the block runs on it once,
// and the new lists are what remains; when it fails, *store is left as it was and the error
// says why.
Status upgrade_store(const SchemaSpec& from, const SchemaSpec& to, std::unique_ptr<rt::Store>* store,
                     const Migration* migration = nullptr);
// The migration's part of upgrade_store: the new version's store made from `old` (left as it was)
// by the block; its failure is the error. What the block prints goes to *printed (null: dropped).
Status migrate_store(const SchemaSpec& from, const SchemaSpec& to, rt::Store& old, const Migration& migration,
                     uint64_t max_steps, std::unique_ptr<rt::Store>* out, std::string* printed = nullptr);
// The upgrade from one version's code to the next's: upgrade_store, with `to`'s migrate block
// compiled against `from`'s schema when it has one. The one step the live upgrade and every replay
// (recovery, as-of reads) take, so they agree.
Status upgrade_version(const VersionCode& from, const VersionCode& to, std::unique_ptr<rt::Store>* store);

// Why the upgrade from version `current` that `plan` describes cannot be applied, or "" when it can:
// a refused plan (a key or type change), or a plan that loses data without consent (`consent` names
// how to give it: "--allow-drop", "allow_drop=1"). The restart path (open_versioned) and the hot
// upgrade of pure-serve (PUT /v1/NAME/source) both ask this.
std::string upgrade_refusal(const std::string& dir, uint32_t current, const UpgradePlan& plan, bool allow_drop,
                            const std::string& consent);
// Writes version file v into DIR whole (temporary file, fdatasync, rename, directory fsync): the
// step before its version record is appended.
Status write_version_file(FileSystem& fs, const std::string& dir, const VersionFile& v);

// ---- Opening a versioned directory ----

struct VersionedOptions {
  std::string module;          // the module's name: a directory belongs to one
  std::string source;          // the source to run now
  VersionCode code;            // that source compiled
  uint64_t legacy_identity = 0;  // module_identity() of that program: adopts a directory from before versions
  CompileVersion compile;      // compiles the versions kept in the directory
  bool upgrade = false;        // apply the plan when the source differs from the directory's version
  bool allow_drop = false;     // consent to a plan that loses lists or fields
  uint64_t migration_steps = kReplaySteps;  // the step budget of the source's migrate block at the upgrade
};

struct VersionedReport {
  uint32_t version = 0;        // the version running now
  uint64_t version_begins = 0;
  bool created = false;        // a new directory: version 1 written
  bool adopted = false;        // a directory from before versions: its source recorded as version 1
  bool upgraded = false;       // the plan was applied: version is the new one
  bool needs_upgrade = false;  // the source differs and upgrade was not asked for (no log started)
  double upgrade_seconds = 0;  // upgraded: the pause, from writing the version file to the store transformed
  UpgradePlan plan;            // when the source differs from the directory's version
  std::string migration_output;  // what the migrate block printed when it ran at this upgrade (or failed)
  std::vector<VersionFile> history;  // every version, oldest first (sources included)
};

// Opens DIR for options.module at the source given: recovers the state, replaying each record with
// its own version's code, deletes a version file whose record never became durable, and compares
// the source with the directory's current version. The same source (byte for byte) continues; a
// different one is planned: with upgrade (and allow_drop when the plan drops data) it becomes the
// next version (its file written, its record durable, the store transformed) before this returns;
// else report->needs_upgrade is set and nothing is started (out->log is null). A refused plan,
// a source older than the directory's, or a different module name is an error naming both.
// `base` carries the log options and callbacks; its identity, schemas and apply are set here.
Status open_versioned(FileSystem& fs, const std::string& dir, OpenOptions base, VersionedOptions options,
                      OpenedModule* out, VersionedReport* report);

// The version history of DIR (no recovery, read only).
Status read_versions(FileSystem& fs, const std::string& dir, std::vector<VersionFile>* out);

}  // namespace pure::host
