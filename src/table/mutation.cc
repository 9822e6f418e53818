// Mutation (table.h): the atomic write of a read-modify-write.
#include "table/table.h"

namespace strata::table {

bool Mutation::empty() const {
  for (const auto& b : storage_rows) {
    if (b != nullptr && b->num_rows() > 0) return false;
  }
  for (const auto& b : inserts) {
    if (b != nullptr && b->num_rows() > 0) return false;
  }
  return true;
}

}  // namespace strata::table
