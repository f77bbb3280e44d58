// host/state_compare.h — whether two states hold the same data, as a checkpoint records it: the
// same lists (names, kinds, column types), the same rows in the same order, cell by cell, texts
// by their bytes. `pure-run --data COPY --verify` compares each checkpoint with the log replayed
// up to its sequence (docs/history.md). Depends on runtime/store.h.
#pragma once
#include <string>

#include "runtime/store.h"

namespace pure::host {

// "" when a and b hold the same data, else the first difference, naming the list, the row (from
// 1, in scan order) and the column: "list 'accounts': row 3, column 2 (balance...): 80 here, 75 there".
// a is "here", b "there" in the message.
std::string compare_states(const rt::Snapshot& a, const rt::Snapshot& b);

}  // namespace pure::host
