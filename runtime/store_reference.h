// runtime/store_reference.h — private: the simple reference store (std::map rows + undo log).
// Used as the model in tests; depends on runtime/store.h only.
#pragma once
#include <memory>
#include <vector>

#include "runtime/store.h"

namespace pure::rt {

// Obviously-correct store: publish() copies every list (O(n)), so it is a model, not a product.
std::unique_ptr<Store> make_reference_store(std::vector<ListSchema> lists);

}  // namespace pure::rt
