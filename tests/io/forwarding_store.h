// Test helper: an ObjectStore that forwards every call to `inner` except RenamePrefix, which
// keeps the ObjectStore default (NotSupported, as on S3). Tests derive from it and override
// the calls they change (fail, delay, truncate, hide modification times, count).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/object_store.h"

namespace strata::testing {

class ForwardingStore : public io::ObjectStore {
 public:
  explicit ForwardingStore(std::shared_ptr<io::ObjectStore> inner) : inner_(std::move(inner)) {}
  Status Put(const std::string& k, std::string_view d) override { return inner_->Put(k, d); }
  Status PutIfAbsent(const std::string& k, std::string_view d) override {
    return inner_->PutIfAbsent(k, d);
  }
  Result<std::string> Get(const std::string& k) override { return inner_->Get(k); }
  Result<std::string> GetRange(const std::string& k, int64_t offset, int64_t length) override {
    return inner_->GetRange(k, offset, length);
  }
  Result<io::ObjectMeta> Head(const std::string& k) override { return inner_->Head(k); }
  Result<std::vector<io::ObjectMeta>> List(const std::string& p) override {
    return inner_->List(p);
  }
  Result<std::vector<std::string>> ListChildren(const std::string& p) override {
    return inner_->ListChildren(p);
  }
  Status Remove(const std::string& k) override { return inner_->Remove(k); }

 protected:
  const std::shared_ptr<io::ObjectStore>& inner() const { return inner_; }

 private:
  std::shared_ptr<io::ObjectStore> inner_;
};

}  // namespace strata::testing
