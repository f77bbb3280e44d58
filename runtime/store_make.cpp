// runtime/store_make.cpp — make_store(): picks the store implementation behind runtime/store.h.
// Depends on the private store headers only.
#include "runtime/store.h"
#include "runtime/store_btree_store.h"

namespace pure::rt {

std::unique_ptr<Store> make_store(std::vector<ListSchema> lists) { return make_btree_store(std::move(lists)); }

}  // namespace pure::rt
