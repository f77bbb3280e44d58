// host/versions.cpp — module versions in a data directory: version files, upgrade plans, the
// schema transform (the same function live and on replay), and open_versioned, which recovers a
// directory through the code of each version and upgrades it. See versions.h and docs/upgrades.md.
// Depends on versions.h, host.h, file_io.h, log_format.h, manifest.h, bytes.h, crc32c.h.
#include "host/versions.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <tuple>
#include <map>

#include "base/assert.h"
#include "host/bytes.h"
#include "host/crc32c.h"
#include "host/file_io.h"
#include "host/log_format.h"
#include "host/manifest.h"

namespace pure::host {

namespace {

constexpr char kVersionPrefix[] = "version-";
constexpr char kVersionSuffix[] = ".src";
constexpr char kVersionMagic[] = "pure-version-file 1";

const char* type_name(rt::ColType t) {
  switch (t) {
    case rt::ColType::Int: return "int";
    case rt::ColType::Num: return "num";
    case rt::ColType::Bool: return "bool";
    case rt::ColType::Text: return "text";
  }
  return "?";
}

// A column's type as the plan names it: an enum by its members.
std::string column_type(const ColumnSpec& c) {
  if (c.members.empty()) return type_name(c.type);
  std::string s = "enum {";
  for (size_t i = 0; i < c.members.size(); ++i) s += (i ? ", " : " ") + c.members[i];
  return s + " }";
}

// Whether a column's values carry over as they are: the same type, and for an enum the old
// members first, in their order (a stored cell is a member's position, so members may only be
// added at the end). "" or why not.
std::string column_change(const ColumnSpec& from, const ColumnSpec& to) {
  bool same = from.type == to.type && from.members.empty() == to.members.empty();
  if (same && from.members.size() <= to.members.size())
    same = std::equal(from.members.begin(), from.members.end(), to.members.begin());
  else if (same)
    same = false;
  if (same) return "";
  std::string why = "changes type from " + column_type(from) + " to " + column_type(to);
  if (!from.members.empty() && !to.members.empty())
    why += " (an enum's stored value is its member's position: members can only be added at the end)";
  return why;
}

std::optional<uint32_t> parse_version_name(std::string_view name) {
  const size_t prefix = sizeof kVersionPrefix - 1, suffix = sizeof kVersionSuffix - 1;
  if (name.size() != prefix + 10 + suffix || name.substr(0, prefix) != kVersionPrefix ||
      name.substr(prefix + 10) != kVersionSuffix)
    return std::nullopt;
  uint64_t n = 0;
  auto digits = name.substr(prefix, 10);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n == 0 || n > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(n);
}

std::string num_text(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The old list a new one continues: by name, else by its `was`.
const ListSpec* find_list(const SchemaSpec& from, const ListSpec& l) {
  for (const ListSpec& o : from)
    if (o.name == l.name) return &o;
  if (!l.was.empty())
    for (const ListSpec& o : from)
      if (o.name == l.was) return &o;
  return nullptr;
}

// The old column a new one continues (index into o.cols), or -1.
int find_column(const ListSpec& o, const ListSpec& l, const ColumnSpec& c) {
  for (size_t i = 0; i < o.cols.size(); ++i)
    if (o.cols[i].name == c.name) return static_cast<int>(i);
  if (!c.was.empty())
    for (size_t i = 0; i < o.cols.size(); ++i)
      if (o.cols[i].name == c.was) {
        // `b was a` while `a` is still a column of the new list would copy one column twice.
        for (const ColumnSpec& other : l.cols)
          if (other.name == c.was) return -2;
        return static_cast<int>(i);
      }
  return -1;
}

uint64_t rows_of(const rt::Store* store, const SchemaSpec& from, const ListSpec& o) {
  if (!store) return 0;
  for (size_t i = 0; i < from.size() && i < store->list_count(); ++i)
    if (&from[i] == &o) return static_cast<uint64_t>(const_cast<rt::Store*>(store)->list(i).count());
  return 0;
}

Status write_whole_file(FileSystem& fs, const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string temp = join_path(dir, name + ".tmp");
  std::unique_ptr<File> f;
  if (Status s = fs.open(temp, OpenMode::Create, &f); !s.ok()) return s;
  if (Status s = f->append(bytes.data(), bytes.size()); !s.ok()) return s;
  if (Status s = f->datasync(); !s.ok()) return s;
  f.reset();
  if (Status s = fs.rename(temp, join_path(dir, name)); !s.ok()) return s;
  return fs.sync_dir(dir);
}

}  // namespace

rt::ListSchema ListSpec::schema() const {
  rt::ListSchema s;
  s.name = name;
  s.is_sequence = sequence;
  for (size_t i = 0; i < cols.size(); ++i) (i < key_count ? s.key : s.fields).push_back(cols[i].type);
  return s;
}

std::vector<rt::ListSchema> VersionCode::schemas() const {
  std::vector<rt::ListSchema> out;
  for (const ListSpec& l : schema) out.push_back(l.schema());
  return out;
}

std::string version_file_name(uint32_t number) {
  char name[40];
  std::snprintf(name, sizeof name, "%s%010u%s", kVersionPrefix, number, kVersionSuffix);
  return name;
}

uint64_t identity_for_module(const std::string& module) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over "module:" NAME
  for (unsigned char c : "module:" + module) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// A few header lines, a blank line, then the source:
//   pure-version-file 1 | module NAME | identity HEX | version N | begins SEQ | format F |
//   source-bytes B | source-crc32c HEX
std::string encode_version_file(const VersionFile& v) {
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", crc32c(0, v.source.data(), v.source.size()));
  std::string out = std::string(kVersionMagic) + "\n";
  out += "module " + v.module + "\n";
  out += "identity " + hex64(v.identity) + "\n";
  out += "version " + std::to_string(v.number) + "\n";
  out += "begins " + std::to_string(v.begins) + "\n";
  out += "format " + std::to_string(v.format) + "\n";
  out += "source-bytes " + std::to_string(v.source.size()) + "\n";
  out += "source-crc32c " + std::string(crc) + "\n\n";
  out += v.source;
  return out;
}

std::string decode_version_file(std::string_view bytes, VersionFile* out) {
  size_t at = 0;
  std::map<std::string, std::string, std::less<>> fields;
  bool first = true;
  while (true) {
    size_t nl = bytes.find('\n', at);
    if (nl == std::string_view::npos) return "the header is cut short";
    std::string_view line = bytes.substr(at, nl - at);
    at = nl + 1;
    if (first) {
      if (line != kVersionMagic) return "not a version file (first line is not '" + std::string(kVersionMagic) + "')";
      first = false;
      continue;
    }
    if (line.empty()) break;
    size_t space = line.find(' ');
    if (space == std::string_view::npos) return "header line '" + std::string(line) + "' has no value";
    fields.emplace(std::string(line.substr(0, space)), std::string(line.substr(space + 1)));
  }
  auto number = [&](const char* key, uint64_t* v, int base = 10) -> std::string {
    auto it = fields.find(key);
    if (it == fields.end()) return std::string("no '") + key + "' line";
    std::string_view text = it->second;
    if (base == 16 && text.substr(0, 2) == "0x") text.remove_prefix(2);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *v, base);
    if (ec != std::errc() || end != text.data() + text.size()) return std::string("'") + key + "' is not a number";
    return "";
  };
  uint64_t version = 0, format = 0, size = 0, crc = 0;
  for (auto [key, dest, base] : {std::tuple{"identity", &out->identity, 16}, std::tuple{"version", &version, 10},
                                 std::tuple{"begins", &out->begins, 10}, std::tuple{"format", &format, 10},
                                 std::tuple{"source-bytes", &size, 10}, std::tuple{"source-crc32c", &crc, 16}})
    if (std::string e = number(key, dest, base); !e.empty()) return e;
  auto module = fields.find("module");
  if (module == fields.end()) return "no 'module' line";
  out->module = module->second;
  if (version == 0 || version > UINT32_MAX) return "version " + std::to_string(version) + " is out of range";
  out->number = static_cast<uint32_t>(version);
  out->format = static_cast<uint32_t>(std::min<uint64_t>(format, UINT32_MAX));
  if (bytes.size() - at != size)
    return "the source is " + std::to_string(bytes.size() - at) + " bytes, the header says " + std::to_string(size);
  out->source.assign(bytes.substr(at));
  if (crc32c(0, out->source.data(), out->source.size()) != crc) return "the source's checksum does not match";
  return "";
}

std::string UpgradePlan::render() const {
  std::string out = "upgrade plan: version " + std::to_string(from) + " -> " + std::to_string(to) + "\n";
  for (const std::string& line : lines) out += "  " + line + "\n";
  if (!schema_changed) out += "  (the stored lists are unchanged: the code alone changes)\n";
  if (!refused.empty()) out += "  refused: " + refused + "\n";
  else if (drops) out += "  this plan loses data: it needs --allow-drop\n";
  return out;
}

UpgradePlan plan_upgrade(const SchemaSpec& from, const SchemaSpec& to, const rt::Store* rows, bool migration,
                         const std::vector<std::string>* consumed) {
  UpgradePlan plan;
  auto read_by_block = [consumed](const std::string& what) {
    return consumed && std::binary_search(consumed->begin(), consumed->end(), what);
  };
  plan.migration = migration;
  std::vector<bool> old_used(from.size(), false);
  auto refuse = [&plan](std::string why) {
    if (plan.refused.empty()) plan.refused = std::move(why);
  };
  constexpr const char* kNeeds = ": that needs a migrate block (docs/upgrades.md, \"Migrations\")";
  for (const ListSpec& l : to) {
    const ListSpec* o = find_list(from, l);
    if (o && old_used[static_cast<size_t>(o - from.data())]) {
      refuse("list " + l.name + " was " + o->name + ", but another list continues " + o->name + " already");
      continue;
    }
    if (!o) {
      plan.schema_changed = true;
      plan.lines.push_back(l.name + ": list added (empty)");
      continue;
    }
    old_used[static_cast<size_t>(o - from.data())] = true;
    uint64_t n = rows_of(rows, from, *o);
    std::vector<std::string> changes;
    if (o->name != l.name) changes.push_back("renamed from " + o->name);
    // A change no upgrade makes by itself: rebuilt by the migrate block, or refused without one.
    std::string needs;
    if (o->sequence != l.sequence)
      needs = l.name + " changes from a " + (o->sequence ? "sequence" : "keyed list") + " to a " +
              (l.sequence ? "sequence" : "keyed list");
    else if (o->key_count != l.key_count)
      needs = l.name + "'s key changes from " + plural(o->key_count, "column", "columns") + " to " +
              std::to_string(l.key_count);
    std::vector<bool> col_used(o->cols.size(), false);
    for (size_t c = 0; c < l.cols.size() && needs.empty(); ++c) {
      const ColumnSpec& col = l.cols[c];
      bool key = c < l.key_count;
      if (key) {  // keys: matched by position (their names are not stored); the type must stay
        std::string change = column_change(o->cols[c], col);
        if (!change.empty()) needs = l.name + "'s key " + col.name + " " + change;
        col_used[c] = true;
        continue;
      }
      int at = find_column(*o, l, col);
      if (at == -2) {
        refuse(l.name + "." + col.name + " was " + col.was + ", but " + col.was + " is still a field of " + l.name);
        continue;
      }
      if (at >= 0 && static_cast<uint32_t>(at) < o->key_count) at = -1;  // a key is not a field
      if (at < 0) {
        std::string def = col.type == rt::ColType::Text ? "\"" + col.default_text + "\""
                          : col.type == rt::ColType::Num ? num_text(col.default_bits)
                          : col.type == rt::ColType::Bool ? (col.default_bits ? "true" : "false")
                                                          : std::to_string(static_cast<int64_t>(col.default_bits));
        changes.push_back("field added: " + col.name + ": " + type_name(col.type) + " = " + def);
        continue;
      }
      if (col_used[static_cast<size_t>(at)]) {
        refuse(l.name + "." + col.name + " continues " + o->cols[static_cast<size_t>(at)].name + ", which another field continues already");
        continue;
      }
      col_used[static_cast<size_t>(at)] = true;
      const ColumnSpec& oc = o->cols[static_cast<size_t>(at)];
      if (std::string change = column_change(oc, col); !change.empty()) {
        needs = l.name + "." + col.name + " " + change;
        if (!migration) needs += kNeeds + std::string(" or a new field instead");
        continue;
      }
      if (oc.name != col.name) changes.push_back("field renamed: " + oc.name + " -> " + col.name);
    }
    if (!needs.empty()) {
      if (!migration) {
        refuse(needs.find(kNeeds) == std::string::npos ? needs + kNeeds : needs);
        continue;
      }
      // The migrate block writes every row of this list; the old rows stay readable as old.NAME.
      plan.schema_changed = true;
      plan.rebuilt.push_back(l.name);
      plan.lines.push_back(l.name + ": " + plural(n, "row", "rows") + ": rebuilt by the migrate block (" + needs +
                           "): starts empty, the old rows are old." + o->name);
      continue;
    }
    for (size_t c = o->key_count; c < o->cols.size(); ++c)
      if (!col_used[c]) {
        if (read_by_block(o->name + "." + o->cols[c].name)) {  // the block consumes it: not a loss
          changes.push_back("field migrated: " + o->cols[c].name + " (read by the migrate block, then not kept)");
          continue;
        }
        plan.drops = true;
        changes.push_back("field dropped: " + o->cols[c].name + " (its values in " + plural(n, "row", "rows") + " are lost)");
      }
    bool reordered = false;  // same fields, another order: the rows are rewritten all the same
    if (changes.empty() && l.cols.size() == o->cols.size())
      for (size_t c = 0; c < l.cols.size(); ++c) reordered |= l.cols[c].name != o->cols[c].name;
    if (reordered) changes.push_back("fields reordered");
    if (!changes.empty()) plan.schema_changed = true;
    std::string line = l.name + ": " + plural(n, "row", "rows") + ": ";
    if (changes.empty()) line += "unchanged";
    for (size_t i = 0; i < changes.size(); ++i) line += (i ? "; " : "") + changes[i];
    plan.lines.push_back(line);
  }
  for (size_t i = 0; i < from.size(); ++i)
    if (!old_used[i] && read_by_block(from[i].name)) {  // the block consumes it: not a loss
      plan.schema_changed = true;
      plan.lines.push_back(from[i].name + ": list migrated: read by the migrate block as old." + from[i].name + " (" +
                           plural(rows_of(rows, from, from[i]), "row", "rows") + "), then not kept");
    } else if (!old_used[i]) {
      plan.schema_changed = plan.drops = true;
      plan.lines.push_back(from[i].name + ": list dropped (" + plural(rows_of(rows, from, from[i]), "row", "rows") +
                           " lost)");
    }
  if (migration) {  // the block may change any list: the rows are rebuilt whatever the schemas say
    plan.schema_changed = true;
    plan.lines.push_back("migrate block: runs once, all or nothing, after these changes (the old lists read as old.NAME)");
  }
  return plan;
}

namespace {

// Every row of one list into another of the same schema.
void copy_rows(const rt::ListReader& from, rt::ListWriter& to, bool sequence) {
  std::unique_ptr<rt::Cursor> cursor = from.scan();
  while (const rt::Cell* r = cursor->take()) {
    if (sequence) to.append(r);
    else to.put(r);
  }
}

// Writes the lists of `to` into dest's first to.size() lists (inside an open begin()), from old:
// lists and fields matched by name (or `was`), added fields set to their default; the lists the
// plan rebuilds (a migration's) stay empty.
void fill_transformed(const SchemaSpec& from, const SchemaSpec& to, const UpgradePlan& plan, rt::Store& old,
                      rt::Store& dest) {
  std::vector<rt::Cell> row;
  for (size_t li = 0; li < to.size(); ++li) {
    const ListSpec& l = to[li];
    const ListSpec* o = find_list(from, l);
    if (!o || std::find(plan.rebuilt.begin(), plan.rebuilt.end(), l.name) != plan.rebuilt.end()) continue;
    size_t oi = static_cast<size_t>(o - from.data());
    PURE_ASSERT(oi < old.list_count());
    // Where each new column comes from: an old row cell, or (-1) the column's default.
    std::vector<int> source(l.cols.size(), -1);
    std::vector<rt::Text*> defaults(l.cols.size(), nullptr);
    for (size_t c = 0; c < l.cols.size(); ++c) {
      if (c < l.key_count) {
        source[c] = static_cast<int>(c);
        continue;
      }
      int at = find_column(*o, l, l.cols[c]);
      if (at >= static_cast<int>(o->key_count)) source[c] = at;
      else if (l.cols[c].type == rt::ColType::Text) defaults[c] = rt::text_new(l.cols[c].default_text);
    }
    // Row cells: a sequence stores its fields only (the position is the order).
    rt::ListWriter& out = dest.list(li);
    std::unique_ptr<rt::Cursor> cursor = old.list(oi).scan();
    row.assign(l.cols.size(), 0);
    while (const rt::Cell* r = cursor->take()) {
      for (size_t c = 0; c < l.cols.size(); ++c) {
        if (source[c] >= 0) row[c] = r[source[c]];
        else if (defaults[c]) row[c] = reinterpret_cast<rt::Cell>(defaults[c]);
        else row[c] = l.cols[c].default_bits;
      }
      if (l.sequence) out.append(row.data());
      else out.put(row.data());
    }
    for (rt::Text* t : defaults) rt::text_release(t);
  }
}

std::vector<rt::ListSchema> schemas_of(const SchemaSpec& spec) {
  std::vector<rt::ListSchema> out;
  for (const ListSpec& l : spec) out.push_back(l.schema());
  return out;
}

}  // namespace

Status transform_store(const SchemaSpec& from, const SchemaSpec& to, rt::Store& old, std::unique_ptr<rt::Store>* out,
                       bool migration) {
  UpgradePlan plan = plan_upgrade(from, to, nullptr, migration);
  if (!plan.refused.empty()) return Status::failure(plan.refused);
  std::unique_ptr<rt::Store> fresh = rt::make_store(schemas_of(to));
  fresh->begin();
  fill_transformed(from, to, plan, old, *fresh);
  fresh->commit();
  *out = std::move(fresh);
  return {};
}

Status upgrade_store(const SchemaSpec& from, const SchemaSpec& to, std::unique_ptr<rt::Store>* store,
                     const Migration* migration) {
  if (!migration) {
    // A change only a migrate block makes is refused here, never carried over as it is (an int
    // column's cells read as nums); refused before "unchanged", which such a plan also says
    UpgradePlan plan = plan_upgrade(from, to, nullptr);
    if (!plan.refused.empty()) return Status::failure(plan.refused);
    if (!plan.schema_changed) return {};
    std::unique_ptr<rt::Store> upgraded;
    if (Status s = transform_store(from, to, **store, &upgraded); !s.ok()) return s;
    *store = std::move(upgraded);
    return {};
  }
  std::unique_ptr<rt::Store> migrated;
  if (Status s = migrate_store(from, to, **store, *migration, kReplaySteps, &migrated); !s.ok()) return s;
  *store = std::move(migrated);
  return {};
}

Status migrate_store(const SchemaSpec& from, const SchemaSpec& to, rt::Store& old, const Migration& migration,
                     uint64_t max_steps, std::unique_ptr<rt::Store>* out, std::string* printed) {
  // One store holds the new lists (transformed, the rebuilt ones empty) and, after them, a copy of
  // the old ones, in the order the migration program declares them (frontend.h, OldList); the
  // block runs on it as one event, and the new lists are copied out of it.
  UpgradePlan plan = plan_upgrade(from, to, nullptr, true);
  if (!plan.refused.empty()) return Status::failure(plan.refused);
  std::vector<rt::ListSchema> schemas = schemas_of(to), old_schemas = schemas_of(from);
  schemas.insert(schemas.end(), old_schemas.begin(), old_schemas.end());
  std::unique_ptr<rt::Store> both = rt::make_store(std::move(schemas));
  PURE_ASSERT(old.list_count() == from.size());
  both->begin();
  fill_transformed(from, to, plan, old, *both);
  for (size_t i = 0; i < from.size(); ++i) copy_rows(old.list(i), both->list(to.size() + i), from[i].sequence);
  both->commit();
  if (std::string why = migration.run(*both, max_steps, printed); !why.empty()) return Status::failure(why);
  std::unique_ptr<rt::Store> upgraded = rt::make_store(schemas_of(to));
  upgraded->begin();
  for (size_t i = 0; i < to.size(); ++i) copy_rows(both->list(i), upgraded->list(i), to[i].sequence);
  upgraded->commit();
  *out = std::move(upgraded);
  return {};
}

Status upgrade_version(const VersionCode& from, const VersionCode& to, std::unique_ptr<rt::Store>* store) {
  if (!to.migration) return upgrade_store(from.schema, to.schema, store);
  Migration migration;
  if (Status s = to.migration(from.schema, &migration); !s.ok()) return s;
  return upgrade_store(from.schema, to.schema, store, &migration);
}

std::string upgrade_refusal(const std::string& dir, uint32_t current, const UpgradePlan& plan, bool allow_drop,
                            const std::string& consent) {
  if (!plan.refused.empty())
    return dir + ": the source cannot be upgraded to from version " + std::to_string(current) + ": " + plan.refused +
           "\n" + plan.migration_errors + plan.render();
  if (plan.drops && !allow_drop)
    return dir + ": the upgrade to version " + std::to_string(current + 1) + " loses data, and " + consent +
           " was not given\n" + plan.render();
  return "";
}

Status write_version_file(FileSystem& fs, const std::string& dir, const VersionFile& v) {
  return write_whole_file(fs, dir, version_file_name(v.number), encode_version_file(v));
}

Status read_versions(FileSystem& fs, const std::string& dir, std::vector<VersionFile>* out) {
  out->clear();
  std::vector<std::string> names;
  if (Status s = fs.list_dir(dir, &names); !s.ok()) return s;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    auto number = parse_version_name(name);
    if (!number) continue;
    std::string path = join_path(dir, name), bytes;
    if (Status s = read_file(fs, path, &bytes); !s.ok()) return s;
    VersionFile v;
    if (std::string problem = decode_version_file(bytes, &v); !problem.empty())
      return Status::failure(path + ": " + problem);
    if (v.number != *number)
      return Status::failure(path + ": says it is version " + std::to_string(v.number) + ", its name says " +
                             std::to_string(*number));
    if (v.format > kDataFormat)
      return Status::failure(path + ": version " + std::to_string(v.number) + " was written in data format " +
                             std::to_string(v.format) + ", and this build reads format " + std::to_string(kDataFormat) +
                             " and older: run it with the newer pure build that wrote it");
    out->push_back(std::move(v));
  }
  for (size_t i = 0; i < out->size(); ++i) {
    const VersionFile& v = (*out)[i];
    if (v.number != i + 1)
      return Status::failure(join_path(dir, version_file_name(static_cast<uint32_t>(i + 1))) +
                             " is missing (version " + std::to_string(v.number) + " is there)");
    if (i && (v.begins <= (*out)[i - 1].begins || v.identity != (*out)[0].identity || v.module != (*out)[0].module))
      return Status::failure(join_path(dir, version_file_name(v.number)) + ": does not continue version " +
                             std::to_string(i) + " (module, identity or starting sequence)");
  }
  return {};
}

Status open_versioned(FileSystem& fs, const std::string& dir, OpenOptions base, VersionedOptions options,
                      OpenedModule* out, VersionedReport* report) {
  *report = VersionedReport{};
  out->store.reset();
  out->log.reset();
  std::vector<std::string> names;
  if (!fs.list_dir(dir, &names).ok()) {
    if (Status s = fs.make_dir(dir); !s.ok()) return s;
    names.clear();
  }
  // A version file that never got its final name was never part of the directory.
  for (const std::string& name : names)
    if (name.rfind(kVersionPrefix, 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      if (Status s = fs.unlink(join_path(dir, name)); !s.ok()) return s;
      if (Status s = fs.sync_dir(dir); !s.ok()) return s;
    }
  std::vector<VersionFile> versions;
  if (Status s = read_versions(fs, dir, &versions); !s.ok()) return s;

  if (versions.empty()) {
    bool has_state = std::any_of(names.begin(), names.end(), [](const std::string& n) {
      return parse_segment_name(n) || parse_checkpoint_name(n) || n == kManifestName;
    });
    VersionFile first;
    first.number = 1;
    first.module = options.module;
    first.source = options.source;
    first.begins = 0;
    if (has_state) {
      // Written before versions: the module that wrote it is known by its compiled identity only;
      // recovery below checks that it is this source, which then becomes version 1.
      first.identity = options.legacy_identity;
      report->adopted = true;
    } else {
      first.identity = identity_for_module(options.module);
      report->created = true;
      if (Status s = write_whole_file(fs, dir, version_file_name(1), encode_version_file(first)); !s.ok()) return s;
    }
    versions.push_back(std::move(first));
  } else if (versions[0].module != options.module) {
    return Status::failure(dir + ": this data directory belongs to module '" + versions[0].module + "' (version " +
                           std::to_string(versions.back().number) + "), not to '" + options.module +
                           "': a directory keeps one module's state");
  }

  // The code of each version, compiled when replay first needs it; the newest file may be one
  // whose record never became durable (an upgrade cut short), which recovery then leaves unused.
  std::vector<std::unique_ptr<VersionCode>> codes(versions.size() + 1);
  auto version_code = [&](uint32_t number, const VersionCode** code) -> Status {
    if (number == 0 || number > versions.size())
      return Status::failure(dir + ": the log names version " + std::to_string(number) + ", which has no " +
                             version_file_name(number));
    if (!codes[number]) {
      auto c = std::make_unique<VersionCode>();
      const VersionFile& v = versions[number - 1];
      if (v.source == options.source) *c = options.code;
      else if (Status s = options.compile(number, v.source, c.get()); !s.ok())
        return Status::failure(join_path(dir, version_file_name(number)) + ": version " + std::to_string(number) +
                               " no longer compiles: " + s.error);
      codes[number] = std::move(c);
    }
    *code = codes[number].get();
    return {};
  };
  base.module_identity = versions[0].identity;
  base.version_at = [&versions](uint64_t sequence) {
    uint32_t v = 1;
    for (const VersionFile& f : versions)
      if (f.begins <= sequence) v = f.number;
    return v;
  };
  base.version_code = version_code;
  base.apply = nullptr;
  base.schemas.clear();

  // Once the state is recovered, before the log starts: settle the versions, and decide whether
  // the log starts at all (it does not when the source is only planned: nothing is written then).
  Status decided;
  Migration migration;  // the source's migrate block, compiled against the running version's lists
  std::unique_ptr<rt::Store> migrated;  // the state it made, which the upgrade puts in place
  uint32_t current = 0;
  bool differs = false;
  const VersionCode* running_code = nullptr;
  base.before_log = [&](const RecoveryReport& recovery, rt::Store& store) -> bool {
    current = recovery.version;
    // Versions past the one the log reached were written by an upgrade whose record never became
    // durable: nobody was told of them.
    for (uint32_t n = current + 1; n <= versions.size(); ++n) {
      if (Status s = fs.unlink(join_path(dir, version_file_name(n))); !s.ok()) return (decided = s), false;
      if (Status s = fs.sync_dir(dir); !s.ok()) return (decided = s), false;
    }
    versions.resize(current);
    report->version = current;
    report->version_begins = versions.back().begins;
    const VersionFile& running = versions.back();
    if (Status s = version_code(current, &running_code); !s.ok()) return (decided = s), false;
    differs = running.source != options.source;
    if (!differs) {
      if (report->adopted)
        if (Status s = write_whole_file(fs, dir, version_file_name(1), encode_version_file(versions[0])); !s.ok())
          return (decided = s), false;
      return true;
    }
    const bool migrates = static_cast<bool>(options.code.migration);
    report->plan = plan_upgrade(running_code->schema, options.code.schema, &store, migrates);
    report->plan.from = current;
    report->plan.to = current + 1;
    // The migrate block is checked against the lists of the version it upgrades, now: a block
    // that does not compile refuses the plan (--plan shows why) before anything is written.
    if (migrates && report->plan.refused.empty()) {
      if (Status s = options.code.migration(running_code->schema, &migration); !s.ok()) {
        report->plan.refused = "its migrate block does not compile against version " + std::to_string(current) +
                               "'s lists";
        report->plan.migration_errors = s.error;
      } else {  // what the block reads is migrated, not lost
        report->plan = plan_upgrade(running_code->schema, options.code.schema, &store, true, &migration.reads);
        report->plan.from = current;
        report->plan.to = current + 1;
      }
    }
    for (const VersionFile& v : versions)
      if (v.source == options.source && v.number < current && !options.upgrade) {
        decided = Status::failure(dir + ": this source is version " + std::to_string(v.number) +
                                  " of the directory, which has been upgraded to version " + std::to_string(current) +
                                  " since sequence " + std::to_string(running.begins) +
                                  ": an older source cannot continue it (with --upgrade it becomes version " +
                                  std::to_string(current + 1) + ")\n" + report->plan.render());
        return false;
      }
    if (!report->plan.refused.empty()) {
      decided = Status::failure(upgrade_refusal(dir, current, report->plan, options.allow_drop, "--allow-drop"));
      return false;
    }
    if (!options.upgrade) {  // the plan is the answer: nothing is written
      report->needs_upgrade = true;
      return false;
    }
    if (std::string why = upgrade_refusal(dir, current, report->plan, options.allow_drop, "--allow-drop"); !why.empty()) {
      decided = Status::failure(why);
      return false;
    }
    // The migrate block runs now, on the recovered state, before the log starts: when it fails
    // (or spends its budget) nothing has been written, and the directory is left as it was.
    if (migrates)
      if (Status s = migrate_store(running_code->schema, options.code.schema, store, migration, options.migration_steps,
                                   &migrated, &report->migration_output);
          !s.ok()) {
        decided = Status::failure(dir + ": the upgrade to version " + std::to_string(current + 1) +
                                  " was not applied: its migrate block failed: " + s.error +
                                  "\n  nothing was changed: the directory is still at version " +
                                  std::to_string(current));
        return false;
      }
    return true;
  };

  OpenedModule opened;
  if (Status s = open_module(fs, dir, base, &opened); !s.ok()) {
    // A directory whose state names this module by name was written under versions: its version
    // files are gone (deleted or not restored with the rest), not from before versions.
    if (report->adopted && s.error.find("module " + hex64(identity_for_module(options.module)) + ", not by this module") !=
                               std::string::npos)
      return Status::failure(dir + ": the state here was written under versions by module '" + options.module +
                             "', but its version files (" + std::string(kVersionPrefix) +
                             "*.src) are missing; nothing was changed: restore them (a backup of the directory "
                             "has them) and start again\n  (" + s.error + ")");
    if (report->adopted && s.error.find("not by this module") != std::string::npos)
      return Status::failure(s.error + "\n  (this directory was written before data directories kept versions: run it "
                                       "once with the source that wrote it, which is then kept as version 1; after "
                                       "that, any newer source can upgrade it)");
    return s;
  }
  if (!decided.ok()) return decided;
  if (report->needs_upgrade) {
    report->history = std::move(versions);
    *out = std::move(opened);
    return {};
  }
  PURE_ASSERT(opened.log);

  if (differs) {
    auto started = std::chrono::steady_clock::now();
    // The new store first, in memory (a migration's was made before the log started).
    std::unique_ptr<rt::Store> upgraded = std::move(opened.store);
    if (migrated) upgraded = std::move(migrated);
    else if (Status s = upgrade_store(running_code->schema, options.code.schema, &upgraded); !s.ok())
      return s;  // cannot happen: the plan was not refused
    VersionFile next;
    next.number = current + 1;
    next.module = options.module;
    next.identity = versions[0].identity;
    next.begins = opened.report.last_sequence + 1;
    next.source = options.source;
    if (Status s = write_version_file(fs, dir, next); !s.ok()) return s;
    char args[4];
    store_u32(args, next.number);
    uint64_t sequence = opened.log->append(kVersionEvent, std::string_view(args, 4));
    if (sequence != next.begins || !opened.log->wait_durable(sequence))
      return Status::failure(dir + ": the version record of the upgrade to version " + std::to_string(next.number) +
                             " did not become durable: " +
                             (opened.log->poisoned() ? opened.log->poison_reason() : std::string("the log is closed")));
    opened.store = std::move(upgraded);
    opened.report.last_sequence = sequence;
    versions.push_back(std::move(next));
    report->upgraded = true;
    report->upgrade_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report->version = current + 1;
    report->version_begins = sequence;
  }
  report->history = std::move(versions);
  *out = std::move(opened);
  return {};
}

}  // namespace pure::host
