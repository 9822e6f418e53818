#include "server/body_reader.h"

#include <string>

namespace strata::server {

Result<arrow::BufferPtr> ReadBody(const httplib::ContentReader& reader, int64_t max_body_bytes) {
  arrow::BufferBuilder body;
  int64_t total = 0;
  bool too_large = false;
  const bool ok = reader([&](const char* data, size_t n) {
    total += static_cast<int64_t>(n);
    if (total > max_body_bytes) {
      too_large = true;
      return total - max_body_bytes <= kMaxDrainBytes;  // keep draining, then give up
    }
    body.Append(data, static_cast<int64_t>(n));
    return true;
  });
  if (too_large) {
    return Status::PayloadTooLarge("request body exceeds the limit of " +
                                   std::to_string(max_body_bytes) +
                                   " bytes (strata serve --max-body-bytes)");
  }
  if (!ok)
    return Status::Invalid("the request body could not be read (the client stopped sending)");
  return body.Finish();
}

}  // namespace strata::server
