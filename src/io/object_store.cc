#include "io/object_store.h"

namespace strata::io {

Status ValidateKey(const std::string& key) {
  if (key.empty()) return Status::Invalid("object key is empty");
  if (key.size() > 4096) {
    return Status::Invalid("object key is " + std::to_string(key.size()) +
                           " bytes, longer than the limit of 4096");
  }
  if (key.find('\0') != std::string::npos) {
    return Status::Invalid("object key '" + key + "' contains a NUL byte");
  }
  size_t start = 0;
  while (true) {
    size_t end = key.find('/', start);
    std::string_view seg(key.data() + start, (end == std::string::npos ? key.size() : end) - start);
    if (seg.empty() || seg == "." || seg == "..") {
      return Status::Invalid("object key '" + key +
                             "' has an empty, '.' or '..' segment (keys are relative paths)");
    }
    if (seg.size() > 255) {
      return Status::Invalid("object key '" + key + "' has a segment of " +
                             std::to_string(seg.size()) + " bytes, longer than the limit of 255");
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return Status::OK();
}

}  // namespace strata::io

namespace strata::io {

Status ObjectStore::RenamePrefix(const std::string& from, const std::string& to) {
  return Status::NotSupported("this object store cannot move '" + from + "/' to '" + to +
                              "/' atomically");
}

}  // namespace strata::io
