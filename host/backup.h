// host/backup.h — copies of a data directory (docs/history.md, "Backups and restore"): a hot
// backup taken while the module's owner keeps writing, and a directory cut back to a past
// sequence. Both build a directory holding exactly events 1..S: every retained checkpoint at or
// before S and every log segment before the one holding S as hard links where the file system
// allows (those files are never written again), copies otherwise; the segment holding S copied
// up to the end of record S only; the version files of the versions begun by S; a manifest saying
// S. Every file and directory is fsynced, and the result appears in one rename (a backup) or one
// exchange of two directories (a restore), so a crash never leaves a half copy under the final
// name. Depends on host.h and file_io.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/host.h"

namespace pure::host {

struct CopyReport {
  uint64_t sequence = 0;    // the copy holds events 1..sequence
  uint64_t checkpoint = 0;  // the newest checkpoint in it (0: none: the log from sequence 1)
  uint64_t oldest = 0;      // the oldest sequence the copy can be read as of (its history)
  uint64_t files = 0, bytes = 0;  // the files in the copy, the manifest included, and their bytes
  uint64_t linked = 0, copied = 0;  // of those files: hard links, and copies (the manifest is written)
  uint64_t attempts = 0;    // from a fresh listing each time (retention deleted a file meanwhile)
  double seconds = 0;
};

enum class CopyProblem : uint8_t {
  None,
  PastRetention,  // the sequence is older than anything the directory keeps (CopyReport::oldest)
  Future,         // the log ends before the sequence
  Exists,         // the backup's name is taken
  Failed,         // a read, write or fsync failed, or a file is damaged (the message names it)
};

// Writes into `into` (which must not exist; created here, its parent existing) DIR's files as of
// `sequence` (see above), fsyncing every file and `into`. Read only on DIR: no lock, so it runs
// beside the directory's owner, given a sequence that is durable there. A file retention deletes
// meanwhile restarts the copy from a fresh listing (a few times). On failure `into` may be left
// half written: the callers build under a temporary name and delete it.
Status copy_data_dir_at(FileSystem& fs, const std::string& dir, const std::string& into, uint64_t sequence,
                        CopyReport* out, CopyProblem* problem);

// A hot backup of one module's data directory DIR as of `sequence` (durable there: the sequence
// its queries see): written as ROOT/NAME.partial/MODULE, then renamed to ROOT/NAME (and ROOT
// fsynced), so that `pure-serve --data ROOT/NAME` serves it and a crash leaves nothing named NAME.
// A NAME.partial left by a crash is deleted first. ROOT/NAME existing is CopyProblem::Exists.
// name must pass check_backup_name; one backup at a time per ROOT is the caller's rule.
Status backup_data_dir(FileSystem& fs, const std::string& dir, const std::string& root, const std::string& name,
                       const std::string& module, uint64_t sequence, CopyReport* out, CopyProblem* problem);

// "" when name may name a backup: 1 to limits::kBackupNameBytes of ASCII letters, digits, '_', '-'
// and '.', starting with a letter or digit, not ending in ".partial"; else the message, with the rule.
std::string check_backup_name(std::string_view name);

// Scheduled backups (pure-serve --backup-every, docs/history.md "Scheduled backups") are named
// auto-MODULE-SEQUENCE, so that the server can find its own among the backups a root holds and
// prune them, never touching one a person named.
std::string scheduled_backup_name(const std::string& module, uint64_t sequence);
struct ScheduledBackup {
  std::string name;
  uint64_t sequence = 0;
};
// The scheduled backups of `module` under root, oldest (lowest sequence) first. Only complete
// ones: a NAME.partial is not listed (and a NAME.pruning is not either: it is being deleted).
Status list_scheduled_backups(FileSystem& fs, const std::string& root, const std::string& module,
                              std::vector<ScheduledBackup>* out);
// Deletes all but the newest `keep` (at least 1) of module's scheduled backups: each is first renamed
// NAME.pruning (and root fsynced), so a crash never leaves a half-deleted directory under a backup's
// name, then deleted; a NAME.pruning left by a crash is deleted too. *removed: the names deleted.
Status prune_scheduled_backups(FileSystem& fs, const std::string& root, const std::string& module, size_t keep,
                               std::vector<std::string>* removed);

// Cuts DIR back to `sequence` (a stopped directory: the caller holds its lock): the cut is built
// beside it as DIR.restoring, then the two directories are exchanged in one step (FileSystem::
// exchange) and the former DIR renamed to *before (DIR.before-restore-<its last sequence>), so a
// crash leaves DIR either as it was or cut, and nothing is deleted. Refused (Future) beyond the
// log's last sequence, (PastRetention) before the oldest sequence the directory can be read as of,
// and when DIR.restoring exists (an interrupted restore: the message says what to look at).
// sequence equal to the last: nothing to cut (*before empty).
Status restore_data_dir_to(FileSystem& fs, const std::string& dir, uint64_t sequence, CopyReport* out,
                           std::string* before, CopyProblem* problem);

}  // namespace pure::host
