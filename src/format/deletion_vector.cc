#include "format/deletion_vector.h"

#include <roaring/roaring.h>

#include <new>

namespace strata::format {
namespace {

roaring_bitmap_t* MustCreate() {
  roaring_bitmap_t* b = roaring_bitmap_create();
  if (b == nullptr) throw std::bad_alloc();
  return b;
}

}  // namespace

DeletionVector::DeletionVector() : bitmap_(MustCreate()) {}

DeletionVector::~DeletionVector() {
  if (bitmap_ != nullptr) roaring_bitmap_free(bitmap_);
}

DeletionVector::DeletionVector(const DeletionVector& other)
    : bitmap_(roaring_bitmap_copy(other.bitmap_)) {
  if (bitmap_ == nullptr) throw std::bad_alloc();
}

DeletionVector& DeletionVector::operator=(const DeletionVector& other) {
  if (this != &other) {
    roaring_bitmap_t* copy = roaring_bitmap_copy(other.bitmap_);
    if (copy == nullptr) throw std::bad_alloc();
    roaring_bitmap_free(bitmap_);
    bitmap_ = copy;
  }
  return *this;
}

DeletionVector::DeletionVector(DeletionVector&& other) noexcept : bitmap_(other.bitmap_) {
  other.bitmap_ = roaring_bitmap_create();  // keep `other` valid (empty)
}

DeletionVector& DeletionVector::operator=(DeletionVector&& other) noexcept {
  if (this != &other) std::swap(bitmap_, other.bitmap_);
  return *this;
}

void DeletionVector::Add(uint32_t row) { roaring_bitmap_add(bitmap_, row); }

void DeletionVector::AddRange(uint64_t begin, uint64_t end) {
  if (end > (uint64_t{1} << 32)) end = uint64_t{1} << 32;
  if (begin >= end) return;
  roaring_bitmap_add_range(bitmap_, begin, end);
}

void DeletionVector::Union(const DeletionVector& other) {
  roaring_bitmap_or_inplace(bitmap_, other.bitmap_);
}

bool DeletionVector::Contains(uint32_t row) const { return roaring_bitmap_contains(bitmap_, row); }

uint64_t DeletionVector::cardinality() const { return roaring_bitmap_get_cardinality(bitmap_); }

std::vector<uint32_t> DeletionVector::ToVector() const {
  std::vector<uint32_t> out(cardinality());
  if (!out.empty()) roaring_bitmap_to_uint32_array(bitmap_, out.data());
  return out;
}

bool DeletionVector::operator==(const DeletionVector& other) const {
  return roaring_bitmap_equals(bitmap_, other.bitmap_);
}

std::string DeletionVector::Serialize() const {
  roaring_bitmap_t* copy = roaring_bitmap_copy(bitmap_);
  if (copy == nullptr) throw std::bad_alloc();
  roaring_bitmap_run_optimize(copy);
  std::string out(roaring_bitmap_portable_size_in_bytes(copy), '\0');
  size_t written = roaring_bitmap_portable_serialize(copy, out.data());
  out.resize(written);
  roaring_bitmap_free(copy);
  return out;
}

Result<DeletionVector> DeletionVector::Deserialize(std::string_view bytes) {
  size_t size = roaring_bitmap_portable_deserialize_size(bytes.data(), bytes.size());
  if (size == 0 || size != bytes.size()) {
    return Status::Corruption("deletion vector: " + std::to_string(bytes.size()) +
                              " bytes are not one portable Roaring bitmap (parsed size " +
                              std::to_string(size) + ")");
  }
  roaring_bitmap_t* b = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  if (b == nullptr) {
    return Status::Corruption("deletion vector: invalid portable Roaring bitmap");
  }
  DeletionVector dv;
  roaring_bitmap_free(dv.bitmap_);
  dv.bitmap_ = b;
  return dv;
}

}  // namespace strata::format
