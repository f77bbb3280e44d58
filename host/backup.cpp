// host/backup.cpp — copies of a data directory as of a sequence (backup.h): hot backups and
// restores. Depends on backup.h, file_io.h, log_format.h, manifest.h, versions.h.
#include "host/backup.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "base/limits.h"
#include "host/file_io.h"
#include "host/log_format.h"
#include "host/manifest.h"
#include "host/versions.h"

namespace pure::host {

namespace {

constexpr char kPartialSuffix[] = ".partial";
constexpr char kRestoringSuffix[] = ".restoring";
constexpr char kPruningSuffix[] = ".pruning";
constexpr char kScheduledPrefix[] = "auto-";
static_assert(sizeof kScheduledPrefix - 1 + limits::kModuleNameBytes + 1 + 20 <= limits::kBackupNameBytes,
              "a scheduled backup's name, auto-MODULE-SEQUENCE, must be a backup name for any module");

using Listing = DirListing;

bool exists(FileSystem& fs, const std::string& path) {
  std::unique_ptr<File> f;
  if (fs.open(path, OpenMode::Read, &f).ok()) return true;
  std::vector<std::string> names;
  return fs.list_dir(path, &names).ok();
}

// Deletes path: a file, or a directory and what it holds (two levels: a backup's NAME/MODULE/FILE).
Status remove_tree(FileSystem& fs, const std::string& path, int depth = 0) {
  std::vector<std::string> names;
  if (!fs.list_dir(path, &names).ok()) return fs.unlink(path);
  if (depth > 2) return Status::failure(path + ": not removed: deeper than a backup's directories");
  for (const std::string& name : names)
    if (Status s = remove_tree(fs, join_path(path, name), depth + 1); !s.ok()) return s;
  return fs.remove_dir(path);
}

// Copies bytes [0, limit) of from into a new file `to` and fdatasyncs it.
Status copy_file(FileSystem& fs, const std::string& from, const std::string& to, uint64_t limit, uint64_t* bytes) {
  std::unique_ptr<File> in, out;
  if (Status s = fs.open(from, OpenMode::Read, &in); !s.ok()) return s;
  uint64_t size = 0;
  if (Status s = in->size(&size); !s.ok()) return s;
  size = std::min(size, limit);
  // A name left at `to` (by a crash of an earlier attempt) may be a hard link to a file of the
  // source: opening it to write would truncate that file. Unlinked first, it is only a name.
  if (std::unique_ptr<File> probe; fs.open(to, OpenMode::Read, &probe).ok())
    if (Status s = fs.unlink(to); !s.ok()) return s;
  if (Status s = fs.open(to, OpenMode::Create, &out); !s.ok()) return s;
  std::string buffer(std::min<uint64_t>(limits::kBackupCopyChunk, std::max<uint64_t>(size, 1)), '\0');
  for (uint64_t done = 0; done < size;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), size - done)), got = 0;
    if (Status s = in->read_at(done, buffer.data(), want, &got); !s.ok()) return s;
    if (got == 0) return Status::failure(from + ": offset " + std::to_string(done) + ": shorter than it was");
    if (Status s = out->append(buffer.data(), got); !s.ok()) return s;
    done += got;
  }
  if (Status s = out->datasync(); !s.ok()) return s;
  *bytes = size;
  return {};
}

// The end of record `sequence` in a segment's bytes, or the last sequence it holds (*last) when it
// ends before it. "" or what is damaged.
std::string record_end(const std::string& path, std::string_view bytes, uint64_t sequence, uint64_t* end,
                       uint64_t* last) {
  SegmentHeader header;
  if (std::string e = decode_segment_header(bytes, &header); !e.empty()) return path + ": offset 0: " + e;
  uint64_t offset = kSegmentHeaderBytes;
  *end = 0;
  *last = header.first_sequence - 1;
  while (offset < bytes.size()) {
    DecodedRecord r;
    RecordCheck check = decode_record(bytes, offset, &r, header.version);
    if (check == RecordCheck::Truncated) break;  // a record being written (the live segment's tail)
    if (check != RecordCheck::Ok)
      return path + ": offset " + std::to_string(offset) + ": " + describe(check);
    if (r.sequence != *last + 1)
      return path + ": offset " + std::to_string(offset) + ": sequence " + std::to_string(r.sequence) + " follows " +
             std::to_string(*last);
    *last = r.sequence;
    offset += r.size;
    if (r.sequence == sequence) {
      *end = offset;
      return "";
    }
  }
  return "";
}

struct Copier {
  FileSystem& fs;
  const std::string& dir;
  const std::string& into;
  CopyReport* out;
  bool* vanished;

  // A hard link of dir/name into `into`, or a copy; the file fdatasynced either way.
  Status take(const std::string& name) {
    const std::string from = join_path(dir, name), to = join_path(into, name);
    if (fs.link(from, to).ok()) {
      std::unique_ptr<File> f;
      uint64_t size = 0;
      if (Status s = fs.open(to, OpenMode::ReadWrite, &f); !s.ok()) return s;
      if (Status s = f->size(&size); !s.ok()) return s;
      if (Status s = f->datasync(); !s.ok()) return s;
      ++out->linked;
      out->bytes += size;
    } else {
      uint64_t bytes = 0;
      if (Status s = copy_file(fs, from, to, UINT64_MAX, &bytes); !s.ok()) {
        *vanished = !still_listed(fs, dir, name);
        return s;
      }
      ++out->copied;
      out->bytes += bytes;
    }
    ++out->files;
    return {};
  }
};

Status attempt(FileSystem& fs, const std::string& dir, const std::string& into, uint64_t sequence, CopyReport* out,
               CopyProblem* problem, bool* vanished) {
  *vanished = false;
  *problem = CopyProblem::Failed;
  Listing l;
  if (Status s = list_data_dir(fs, dir, &l); !s.ok()) return s;
  if (l.segments.size() + l.checkpoints.size() + l.versions.size() + 1 > limits::kBackupFiles)
    return Status::failure(dir + ": holds " + std::to_string(l.segments.size() + l.checkpoints.size()) +
                           " log segments and checkpoints, more than a copy takes (limits::kBackupFiles = " +
                           std::to_string(limits::kBackupFiles) + "): keep less history (--retain)");
  // The oldest sequence the directory can be read as of: its oldest checkpoint, or 0 when the log
  // starts at sequence 1 (or it holds nothing: the empty state).
  out->oldest = l.oldest();
  if (out->oldest == UINT64_MAX) {
    *problem = CopyProblem::PastRetention;
    return Status::failure(dir + ": no checkpoint and no log from sequence 1: it holds no state to copy");
  }
  if (sequence < out->oldest) {
    *problem = CopyProblem::PastRetention;
    return Status::failure("sequence " + std::to_string(sequence) + " is past the retention window: the oldest " +
                           "sequence this directory holds the state of is " + std::to_string(out->oldest));
  }
  uint64_t checkpoint = 0;
  for (uint64_t c : l.checkpoints)
    if (c <= sequence) checkpoint = c;
  // The segment holding `sequence`: the last one starting at or before it.
  const std::pair<uint64_t, std::string>* holding = nullptr;
  for (const auto& seg : l.segments)
    if (seg.first <= sequence) holding = &seg;
  uint64_t prefix = 0;  // bytes of it up to the end of record `sequence`
  if (holding) {
    const std::string path = join_path(dir, holding->second);
    std::string bytes;
    if (Status s = read_file(fs, path, &bytes); !s.ok()) {
      *vanished = !still_listed(fs, dir, holding->second);
      return s;
    }
    uint64_t last = 0;
    if (std::string e = record_end(path, bytes, sequence, &prefix, &last); !e.empty()) return Status::failure(e);
    if (prefix == 0) {
      *problem = CopyProblem::Future;
      return Status::failure("sequence " + std::to_string(sequence) + " is beyond the log: " + dir +
                             "'s last record is sequence " + std::to_string(last));
    }
  } else if (sequence > checkpoint) {
    *problem = CopyProblem::Future;
    return Status::failure("sequence " + std::to_string(sequence) + " is beyond the log: " + dir + " holds " +
                           (checkpoint ? "checkpoint " + std::to_string(checkpoint) + " and no log after it"
                                       : std::string("no log")));
  }
  // The directory's identity, for the copy's manifest.
  ManifestState manifest;
  bool found = false;
  if (Status s = read_manifest(fs, dir, &found, &manifest); !s.ok()) return s;
  std::vector<VersionFile> versions;
  for (const std::string& name : l.versions) {
    std::string bytes;
    VersionFile v;
    if (Status s = read_file(fs, join_path(dir, name), &bytes); !s.ok()) return s;
    if (std::string e = decode_version_file(bytes, &v); !e.empty())
      return Status::failure(join_path(dir, name) + ": " + e);
    if (v.begins <= sequence) versions.push_back(v);
  }
  if (!found) {
    if (!versions.empty()) manifest.module_identity = versions.front().identity;
    else if (holding) {
      std::string bytes;
      SegmentHeader header;
      if (Status s = read_file(fs, join_path(dir, holding->second), &bytes); !s.ok()) return s;
      if (std::string e = decode_segment_header(bytes, &header); !e.empty()) return Status::failure(e);
      manifest.module_identity = header.module_identity;
    }
  }

  if (Status s = fs.make_dir(into); !s.ok()) return s;
  Copier copier{fs, dir, into, out, vanished};
  for (const VersionFile& v : versions)
    if (Status s = copier.take(version_file_name(v.number)); !s.ok()) return s;
  for (uint64_t c : l.checkpoints)
    if (c <= sequence)
      if (Status s = copier.take(checkpoint_name(c)); !s.ok()) return s;
  for (const auto& seg : l.segments) {
    if (&seg == holding || seg.first > sequence) break;
    if (Status s = copier.take(seg.second); !s.ok()) return s;
  }
  if (holding) {
    uint64_t bytes = 0;
    if (Status s = copy_file(fs, join_path(dir, holding->second), join_path(into, holding->second), prefix, &bytes);
        !s.ok())
      return s;
    if (bytes != prefix)
      return Status::failure(join_path(dir, holding->second) + ": shorter than the " + std::to_string(prefix) +
                             " bytes it held");
    ++out->copied;
    ++out->files;
    out->bytes += bytes;
  }
  manifest.checkpoint = checkpoint;
  manifest.newest_segment = holding ? holding->first : 0;
  manifest.durable = sequence;
  const std::string text = encode_manifest(manifest);
  std::unique_ptr<File> f;
  const std::string manifest_path = join_path(into, kManifestName);
  if (Status s = fs.open(manifest_path, OpenMode::Create, &f); !s.ok()) return s;
  if (Status s = f->append(text.data(), text.size()); !s.ok()) return s;
  if (Status s = f->datasync(); !s.ok()) return s;
  ++out->files;
  out->bytes += text.size();
  if (Status s = fs.sync_dir(into); !s.ok()) return s;
  out->sequence = sequence;
  out->checkpoint = checkpoint;
  *problem = CopyProblem::None;
  return {};
}

std::string parent_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string check_backup_name(std::string_view name) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty() && name.size() <= limits::kBackupNameBytes && alnum(name.front());
  for (char c : name) ok = ok && (alnum(c) || c == '_' || c == '-' || c == '.');
  const std::string_view partial = kPartialSuffix;
  if (ok && name.size() >= partial.size() && name.substr(name.size() - partial.size()) == partial) ok = false;
  if (ok) return "";
  return "a backup's name is 1 to " + std::to_string(limits::kBackupNameBytes) +
         " ASCII letters, digits, '_', '-' and '.', starting with a letter or digit and not ending in '.partial'";
}

Status copy_data_dir_at(FileSystem& fs, const std::string& dir, const std::string& into, uint64_t sequence,
                        CopyReport* out, CopyProblem* problem) {
  const auto start = std::chrono::steady_clock::now();
  *out = CopyReport{};
  Status s;
  for (int i = 0; i < limits::kBackupAttempts; ++i) {
    bool vanished = false;
    CopyReport report;
    report.attempts = uint64_t(i) + 1;
    s = attempt(fs, dir, into, sequence, &report, problem, &vanished);
    if (s.ok() || !vanished) {
      *out = report;
      break;
    }
    // Retention removed a file between the listing and the link: start again from a new listing.
    if (Status r = remove_tree(fs, into); !r.ok()) return (*problem = CopyProblem::Failed), r;
  }
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

Status backup_data_dir(FileSystem& fs, const std::string& dir, const std::string& root, const std::string& name,
                       const std::string& module, uint64_t sequence, CopyReport* out, CopyProblem* problem) {
  const auto start = std::chrono::steady_clock::now();
  *problem = CopyProblem::Failed;
  if (std::string e = check_backup_name(name); !e.empty()) return Status::failure(e);
  const std::string final_path = join_path(root, name), partial = final_path + kPartialSuffix;
  if (exists(fs, final_path)) {
    *problem = CopyProblem::Exists;
    return Status::failure(final_path + " exists: a backup's name is used once (choose another, or delete it)");
  }
  if (exists(fs, partial))  // left by a crash during a backup of this name: never complete
    if (Status s = remove_tree(fs, partial); !s.ok()) return s;
  if (Status s = fs.make_dir(partial); !s.ok()) return s;
  Status s = copy_data_dir_at(fs, dir, join_path(partial, module), sequence, out, problem);
  if (s.ok()) {
    if (Status d = fs.sync_dir(partial); !d.ok()) s = d;
    else if (Status r = fs.rename(partial, final_path); !r.ok()) s = r;
    else if (Status d2 = fs.sync_dir(root); !d2.ok()) s = d2;  // a failure here leaves a whole backup, maybe not named
  }
  if (!s.ok()) {
    if (*problem == CopyProblem::None) *problem = CopyProblem::Failed;
    (void)remove_tree(fs, partial);  // best effort: a NAME.partial left behind is deleted by the next backup of NAME
    return s;
  }
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {};
}

Status restore_data_dir_to(FileSystem& fs, const std::string& dir, uint64_t sequence, CopyReport* out,
                           std::string* before, CopyProblem* problem) {
  before->clear();
  *problem = CopyProblem::Failed;
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string restoring = base + kRestoringSuffix;
  if (exists(fs, restoring))
    return Status::failure(restoring + " exists: an earlier restore of " + base + " was interrupted. It holds either "
                           "the cut it was building (" + base + " is as it was) or, if the exchange happened, the "
                           "directory before the restore (" + base + " is cut): start pure-run --data on " + base +
                           ", then move " + restoring + " away");
  // The log's last sequence: nothing to cut at it, refused beyond it.
  Listing l;
  if (Status s = list_data_dir(fs, base, &l); !s.ok()) return s;
  uint64_t last = 0;
  if (!l.segments.empty()) {
    const std::string path = join_path(base, l.segments.back().second);
    std::string bytes;
    uint64_t end = 0;
    if (Status s = read_file(fs, path, &bytes); !s.ok()) return s;
    if (std::string e = record_end(path, bytes, UINT64_MAX, &end, &last); !e.empty()) return Status::failure(e);
  }
  if (!l.checkpoints.empty()) last = std::max(last, l.checkpoints.back());
  if (sequence > last) {
    *problem = CopyProblem::Future;
    return Status::failure("sequence " + std::to_string(sequence) + " is beyond the log: its last sequence is " +
                           std::to_string(last));
  }
  if (sequence == last) {
    *out = CopyReport{};
    out->sequence = sequence;
    *problem = CopyProblem::None;
    return {};
  }
  Status s = copy_data_dir_at(fs, base, restoring, sequence, out, problem);
  if (s.ok()) s = fs.sync_dir(parent_of(base));
  if (!s.ok()) {
    (void)remove_tree(fs, restoring);
    return s;
  }
  // The one step that changes what DIR is: before it DIR is whole as it was, after it DIR is cut.
  if (Status e = fs.exchange(base, restoring); !e.ok()) {
    (void)remove_tree(fs, restoring);
    *problem = CopyProblem::Failed;
    return e;
  }
  if (Status d = fs.sync_dir(parent_of(base)); !d.ok()) return (*problem = CopyProblem::Failed), d;
  // Keep the directory as it was (its files are the cut's too, linked): nothing of it is lost.
  std::string kept = base + ".before-restore-" + std::to_string(last);
  for (int i = 2; exists(fs, kept); ++i) kept = base + ".before-restore-" + std::to_string(last) + "-" + std::to_string(i);
  if (Status r = fs.rename(restoring, kept); !r.ok()) return (*problem = CopyProblem::Failed), r;
  if (Status d = fs.sync_dir(parent_of(base)); !d.ok()) return (*problem = CopyProblem::Failed), d;
  *before = kept;
  *problem = CopyProblem::None;
  return {};
}

}  // namespace pure::host

namespace pure::host {

std::string scheduled_backup_name(const std::string& module, uint64_t sequence) {
  return kScheduledPrefix + module + "-" + std::to_string(sequence);
}

namespace {

// The sequence of a scheduled backup of module named `name` (with `suffix` after it), or 0.
uint64_t scheduled_sequence(std::string_view name, const std::string& module, std::string_view suffix) {
  const std::string head = kScheduledPrefix + module + "-";
  if (name.size() <= head.size() + suffix.size() || name.substr(0, head.size()) != head ||
      name.substr(name.size() - suffix.size()) != suffix)
    return 0;
  std::string_view digits = name.substr(head.size(), name.size() - head.size() - suffix.size());
  if (digits.size() > 19 || digits.front() == '0') return 0;
  uint64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

}  // namespace

Status list_scheduled_backups(FileSystem& fs, const std::string& root, const std::string& module,
                              std::vector<ScheduledBackup>* out) {
  out->clear();
  std::vector<std::string> names;
  if (Status s = fs.list_dir(root, &names); !s.ok()) return s;
  for (const std::string& name : names)
    if (uint64_t seq = scheduled_sequence(name, module, ""); seq != 0) out->push_back({name, seq});
  std::sort(out->begin(), out->end(),
            [](const ScheduledBackup& a, const ScheduledBackup& b) { return a.sequence < b.sequence; });
  return {};
}

Status prune_scheduled_backups(FileSystem& fs, const std::string& root, const std::string& module, size_t keep,
                               std::vector<std::string>* removed) {
  removed->clear();
  if (keep == 0) return Status::failure("prune_scheduled_backups: keep must be at least 1");
  std::vector<std::string> names;
  if (Status s = fs.list_dir(root, &names); !s.ok()) return s;
  std::sort(names.begin(), names.end());  // a deterministic order of deletion
  std::vector<std::string> doomed;  // NAME.pruning paths
  for (const std::string& name : names)  // left by a crash during an earlier pruning
    if (scheduled_sequence(name, module, kPruningSuffix) != 0) doomed.push_back(name);
  std::vector<ScheduledBackup> backups;
  if (Status s = list_scheduled_backups(fs, root, module, &backups); !s.ok()) return s;
  const size_t extra = backups.size() > keep ? backups.size() - keep : 0;
  for (size_t i = 0; i < extra; ++i) {
    const std::string from = join_path(root, backups[i].name), to = from + kPruningSuffix;
    if (Status s = fs.rename(from, to); !s.ok()) return s;
    doomed.push_back(backups[i].name + kPruningSuffix);
  }
  // The renames are durable before anything is deleted: a crash after this point leaves only
  // NAME.pruning directories, never a backup's name over a partly deleted copy.
  if (extra != 0)
    if (Status s = fs.sync_dir(root); !s.ok()) return s;
  for (const std::string& name : doomed) {
    if (Status s = remove_tree(fs, join_path(root, name)); !s.ok()) return s;
    removed->push_back(name.substr(0, name.size() - (sizeof kPruningSuffix - 1)));
  }
  if (!doomed.empty())
    if (Status s = fs.sync_dir(root); !s.ok()) return s;
  return {};
}

}  // namespace pure::host
