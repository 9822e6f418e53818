#include "arrow/ipc/schema_codec.h"

#include <string>
#include <vector>

namespace strata::arrow::ipc::internal {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Widest fixed_size_binary accepted on read (bit widths must stay within int).
constexpr int32_t kMaxByteWidth = int32_t{1} << 24;

fb::TimeUnit ToFbUnit(TimeUnit u) {
  switch (u) {
    case TimeUnit::kSecond:
      return fb::TimeUnit::SECOND;
    case TimeUnit::kMilli:
      return fb::TimeUnit::MILLISECOND;
    case TimeUnit::kMicro:
      return fb::TimeUnit::MICROSECOND;
    case TimeUnit::kNano:
      return fb::TimeUnit::NANOSECOND;
  }
  return fb::TimeUnit::SECOND;
}

Offset<flatbuffers::Vector<Offset<fb::KeyValue>>> EncodeMetadata(FlatBufferBuilder& fbb,
                                                                 const KeyValueMetadata& md) {
  if (md.empty()) return 0;
  std::vector<Offset<fb::KeyValue>> kvs;
  kvs.reserve(md.size());
  for (const auto& [k, v] : md.pairs()) {
    auto ko = fbb.CreateString(k);
    auto vo = fbb.CreateString(v);
    kvs.push_back(fb::CreateKeyValue(fbb, ko, vo));
  }
  return fbb.CreateVector(kvs);
}

Result<Offset<fb::Field>> EncodeField(FlatBufferBuilder& fbb, const Field& f) {
  if (f.type == nullptr) return Status::Invalid("field '" + f.name + "' has no type");
  const DataType& t = *f.type;
  std::vector<Offset<fb::Field>> children;
  if (t.id() == TypeId::kList || t.id() == TypeId::kLargeList || t.id() == TypeId::kFixedSizeList ||
      t.id() == TypeId::kStruct) {
    if (t.id() != TypeId::kStruct && t.children().size() != 1) {
      return Status::Invalid("field '" + f.name + "': list type needs exactly one child");
    }
    for (const auto& c : t.children()) {
      if (c == nullptr) return Status::Invalid("field '" + f.name + "' has a null child");
      STRATA_ASSIGN_OR_RETURN(auto co, EncodeField(fbb, *c));
      children.push_back(co);
    }
  }
  fb::Type tt = fb::Type::NONE;
  Offset<void> to;
  switch (t.id()) {
    case TypeId::kNull:
      tt = fb::Type::Null;
      to = fb::CreateNull(fbb).Union();
      break;
    case TypeId::kBool:
      tt = fb::Type::Bool;
      to = fb::CreateBool(fbb).Union();
      break;
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
      tt = fb::Type::Int;
      to = fb::CreateInt(fbb, t.bit_width(), t.is_signed_integer()).Union();
      break;
    case TypeId::kFloat16:
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      fb::Precision p = t.id() == TypeId::kFloat16   ? fb::Precision::HALF
                        : t.id() == TypeId::kFloat32 ? fb::Precision::SINGLE
                                                     : fb::Precision::DOUBLE;
      tt = fb::Type::FloatingPoint;
      to = fb::CreateFloatingPoint(fbb, p).Union();
      break;
    }
    case TypeId::kUtf8:
      tt = fb::Type::Utf8;
      to = fb::CreateUtf8(fbb).Union();
      break;
    case TypeId::kLargeUtf8:
      tt = fb::Type::LargeUtf8;
      to = fb::CreateLargeUtf8(fbb).Union();
      break;
    case TypeId::kBinary:
      tt = fb::Type::Binary;
      to = fb::CreateBinary(fbb).Union();
      break;
    case TypeId::kLargeBinary:
      tt = fb::Type::LargeBinary;
      to = fb::CreateLargeBinary(fbb).Union();
      break;
    case TypeId::kFixedSizeBinary:
      if (t.byte_width() < 0) {
        return Status::Invalid("field '" + f.name + "': fixed_size_binary width " +
                               std::to_string(t.byte_width()) + " is negative");
      }
      tt = fb::Type::FixedSizeBinary;
      to = fb::CreateFixedSizeBinary(fbb, t.byte_width()).Union();
      break;
    case TypeId::kDate32:
      tt = fb::Type::Date;
      to = fb::CreateDate(fbb, fb::DateUnit::DAY).Union();
      break;
    case TypeId::kDate64:
      tt = fb::Type::Date;
      to = fb::CreateDate(fbb, fb::DateUnit::MILLISECOND).Union();
      break;
    case TypeId::kTime32:
    case TypeId::kTime64: {
      const bool is32 = t.id() == TypeId::kTime32;
      const bool unit32 = t.unit() == TimeUnit::kSecond || t.unit() == TimeUnit::kMilli;
      if (is32 != unit32) {
        return Status::Invalid("field '" + f.name + "': " + t.ToString() +
                               " has a unit that does not fit its width");
      }
      tt = fb::Type::Time;
      to = fb::CreateTime(fbb, ToFbUnit(t.unit()), is32 ? 32 : 64).Union();
      break;
    }
    case TypeId::kTimestamp: {
      auto tz =
          t.timezone().empty() ? Offset<flatbuffers::String>() : fbb.CreateString(t.timezone());
      tt = fb::Type::Timestamp;
      to = fb::CreateTimestamp(fbb, ToFbUnit(t.unit()), tz).Union();
      break;
    }
    case TypeId::kDuration:
      tt = fb::Type::Duration;
      to = fb::CreateDuration(fbb, ToFbUnit(t.unit())).Union();
      break;
    case TypeId::kDecimal128:
      tt = fb::Type::Decimal;
      to = fb::CreateDecimal(fbb, t.precision(), t.scale(), 128).Union();
      break;
    case TypeId::kList:
      tt = fb::Type::List;
      to = fb::CreateList(fbb).Union();
      break;
    case TypeId::kLargeList:
      tt = fb::Type::LargeList;
      to = fb::CreateLargeList(fbb).Union();
      break;
    case TypeId::kFixedSizeList:
      if (t.list_size() < 0) {
        return Status::Invalid("field '" + f.name + "': fixed_size_list size " +
                               std::to_string(t.list_size()) + " is negative");
      }
      tt = fb::Type::FixedSizeList;
      to = fb::CreateFixedSizeList(fbb, t.list_size()).Union();
      break;
    case TypeId::kStruct:
      tt = fb::Type::Struct_;
      to = fb::CreateStruct_(fbb).Union();
      break;
  }
  if (tt == fb::Type::NONE) {
    return Status::Invalid("field '" + f.name + "' has an unknown type id " +
                           std::to_string(static_cast<int>(t.id())));
  }
  auto name = fbb.CreateString(f.name);
  auto kids = fbb.CreateVector(children);
  auto md = EncodeMetadata(fbb, f.metadata);
  return fb::CreateField(fbb, name, f.nullable, tt, to, 0, kids, md);
}

// --- decoding ---------------------------------------------------------------------------------

Result<TimeUnit> FromFbUnit(fb::TimeUnit u, const std::string& name) {
  switch (u) {
    case fb::TimeUnit::SECOND:
      return TimeUnit::kSecond;
    case fb::TimeUnit::MILLISECOND:
      return TimeUnit::kMilli;
    case fb::TimeUnit::MICROSECOND:
      return TimeUnit::kMicro;
    case fb::TimeUnit::NANOSECOND:
      return TimeUnit::kNano;
  }
  return Status::Corruption("field '" + name + "': unknown time unit " +
                            std::to_string(static_cast<int>(u)));
}

KeyValueMetadata DecodeMetadata(const flatbuffers::Vector<flatbuffers::Offset<fb::KeyValue>>* kvs) {
  KeyValueMetadata md;
  if (kvs == nullptr) return md;
  for (const fb::KeyValue* kv : *kvs) {
    if (kv == nullptr) continue;
    md.Set(kv->key() ? kv->key()->str() : std::string(),
           kv->value() ? kv->value()->str() : std::string());
  }
  return md;
}

const char* FbTypeName(fb::Type t) {
  const char* n = fb::EnumNameType(t);
  return (n != nullptr && *n != '\0') ? n : "unknown";
}

Result<FieldPtr> DecodeField(const fb::Field* f, int depth, int max_depth);

Result<std::vector<FieldPtr>> DecodeChildren(const fb::Field* f, const std::string& name, int depth,
                                             int max_depth) {
  std::vector<FieldPtr> out;
  if (f->children() == nullptr) return out;
  out.reserve(f->children()->size());
  for (const fb::Field* c : *f->children()) {
    if (c == nullptr) return Status::Corruption("field '" + name + "' has a null child");
    STRATA_ASSIGN_OR_RETURN(auto cf, DecodeField(c, depth + 1, max_depth));
    out.push_back(std::move(cf));
  }
  return out;
}

Result<FieldPtr> DecodeField(const fb::Field* f, int depth, int max_depth) {
  std::string name = f->name() ? f->name()->str() : std::string();
  if (depth > max_depth) {
    return Status::Corruption("field '" + name + "' is nested " + std::to_string(depth) +
                              " levels deep; the limit is " + std::to_string(max_depth));
  }
  if (f->dictionary() != nullptr) {
    return Status::NotSupported("field '" + name +
                                "' is dictionary-encoded; dictionaries are not supported");
  }
  STRATA_ASSIGN_OR_RETURN(auto children, DecodeChildren(f, name, depth, max_depth));
  const fb::Type tt = f->type_type();
  auto want_children = [&](size_t n) -> Status {
    if (children.size() != n) {
      return Status::Corruption("field '" + name + "' of type " + FbTypeName(tt) + " has " +
                                std::to_string(children.size()) + " children, expected " +
                                std::to_string(n));
    }
    return Status::OK();
  };
  auto missing = [&]() {
    return Status::Corruption("field '" + name + "' has no type parameters");
  };
  DataTypePtr type;
  switch (tt) {
    case fb::Type::Null:
      type = null();
      break;
    case fb::Type::Bool:
      type = boolean();
      break;
    case fb::Type::Int: {
      const fb::Int* p = f->type_as_Int();
      if (p == nullptr) return missing();
      const bool s = p->is_signed();
      switch (p->bitWidth()) {
        case 8:
          type = s ? int8() : uint8();
          break;
        case 16:
          type = s ? int16() : uint16();
          break;
        case 32:
          type = s ? int32() : uint32();
          break;
        case 64:
          type = s ? int64() : uint64();
          break;
        default:
          return Status::Corruption("field '" + name + "': int bit width " +
                                    std::to_string(p->bitWidth()) + " is not 8, 16, 32 or 64");
      }
      break;
    }
    case fb::Type::FloatingPoint: {
      const fb::FloatingPoint* p = f->type_as_FloatingPoint();
      if (p == nullptr) return missing();
      switch (p->precision()) {
        case fb::Precision::HALF:
          type = float16();
          break;
        case fb::Precision::SINGLE:
          type = float32();
          break;
        case fb::Precision::DOUBLE:
          type = float64();
          break;
        default:
          return Status::Corruption("field '" + name + "': unknown float precision " +
                                    std::to_string(static_cast<int>(p->precision())));
      }
      break;
    }
    case fb::Type::Utf8:
      type = utf8();
      break;
    case fb::Type::LargeUtf8:
      type = large_utf8();
      break;
    case fb::Type::Binary:
      type = binary();
      break;
    case fb::Type::LargeBinary:
      type = large_binary();
      break;
    case fb::Type::FixedSizeBinary: {
      const fb::FixedSizeBinary* p = f->type_as_FixedSizeBinary();
      if (p == nullptr) return missing();
      if (p->byteWidth() < 0 || p->byteWidth() > kMaxByteWidth) {
        return Status::Corruption("field '" + name + "': fixed_size_binary width " +
                                  std::to_string(p->byteWidth()) + " is outside [0, " +
                                  std::to_string(kMaxByteWidth) + "]");
      }
      type = fixed_size_binary(p->byteWidth());
      break;
    }
    case fb::Type::Decimal: {
      const fb::Decimal* p = f->type_as_Decimal();
      if (p == nullptr) return missing();
      if (p->bitWidth() != 128) {
        return Status::NotSupported("field '" + name + "': decimal" +
                                    std::to_string(p->bitWidth()) +
                                    " is not supported (only decimal128)");
      }
      type = decimal128(p->precision(), p->scale());
      break;
    }
    case fb::Type::Date: {
      const fb::Date* p = f->type_as_Date();
      if (p == nullptr) return missing();
      if (p->unit() == fb::DateUnit::DAY) {
        type = date32();
      } else if (p->unit() == fb::DateUnit::MILLISECOND) {
        type = date64();
      } else {
        return Status::Corruption("field '" + name + "': unknown date unit");
      }
      break;
    }
    case fb::Type::Time: {
      const fb::Time* p = f->type_as_Time();
      if (p == nullptr) return missing();
      STRATA_ASSIGN_OR_RETURN(TimeUnit u, FromFbUnit(p->unit(), name));
      const bool unit32 = u == TimeUnit::kSecond || u == TimeUnit::kMilli;
      if (p->bitWidth() != (unit32 ? 32 : 64)) {
        return Status::Corruption("field '" + name + "': time with unit " + TimeUnitName(u) +
                                  " has bit width " + std::to_string(p->bitWidth()));
      }
      type = DataType::MakeTemporal(unit32 ? TypeId::kTime32 : TypeId::kTime64, u);
      break;
    }
    case fb::Type::Timestamp: {
      const fb::Timestamp* p = f->type_as_Timestamp();
      if (p == nullptr) return missing();
      STRATA_ASSIGN_OR_RETURN(TimeUnit u, FromFbUnit(p->unit(), name));
      type = timestamp(u, p->timezone() ? p->timezone()->str() : std::string());
      break;
    }
    case fb::Type::Duration: {
      const fb::Duration* p = f->type_as_Duration();
      if (p == nullptr) return missing();
      STRATA_ASSIGN_OR_RETURN(TimeUnit u, FromFbUnit(p->unit(), name));
      type = duration(u);
      break;
    }
    case fb::Type::List:
      STRATA_RETURN_IF_ERROR(want_children(1));
      type = list(children[0]);
      break;
    case fb::Type::LargeList:
      STRATA_RETURN_IF_ERROR(want_children(1));
      type = large_list(children[0]);
      break;
    case fb::Type::FixedSizeList: {
      const fb::FixedSizeList* p = f->type_as_FixedSizeList();
      if (p == nullptr) return missing();
      STRATA_RETURN_IF_ERROR(want_children(1));
      if (p->listSize() < 0) {
        return Status::Corruption("field '" + name + "': fixed_size_list size " +
                                  std::to_string(p->listSize()) + " is negative");
      }
      type = fixed_size_list(children[0], p->listSize());
      break;
    }
    case fb::Type::Struct_:
      type = struct_(std::move(children));
      break;
    case fb::Type::NONE:
      return Status::Corruption("field '" + name + "' has no type");
    default:
      return Status::NotSupported("field '" + name + "' has type " + FbTypeName(tt) + " (" +
                                  std::to_string(static_cast<int>(tt)) +
                                  "), which Strata does not support");
  }
  if (!type->is_list_like() && type->id() != TypeId::kStruct) {
    STRATA_RETURN_IF_ERROR(want_children(0));
  }
  return field(std::move(name), std::move(type), f->nullable(),
               DecodeMetadata(f->custom_metadata()));
}

}  // namespace

Result<Offset<fb::Schema>> EncodeSchema(FlatBufferBuilder& fbb, const Schema& schema) {
  std::vector<Offset<fb::Field>> fields;
  fields.reserve(schema.fields().size());
  for (const auto& f : schema.fields()) {
    if (f == nullptr) return Status::Invalid("schema has a null field");
    STRATA_ASSIGN_OR_RETURN(auto fo, EncodeField(fbb, *f));
    fields.push_back(fo);
  }
  auto fv = fbb.CreateVector(fields);
  auto md = EncodeMetadata(fbb, schema.metadata());
  return fb::CreateSchema(fbb, fb::Endianness::Little, fv, md);
}

Result<SchemaPtr> DecodeSchema(const fb::Schema* schema, int max_depth) {
  if (schema == nullptr) return Status::Corruption("IPC message has no schema");
  if (schema->endianness() != fb::Endianness::Little) {
    return Status::NotSupported("schema is big-endian; only little-endian data is supported");
  }
  std::vector<FieldPtr> fields;
  if (schema->fields() != nullptr) {
    fields.reserve(schema->fields()->size());
    for (const fb::Field* f : *schema->fields()) {
      if (f == nullptr) return Status::Corruption("schema has a null field");
      STRATA_ASSIGN_OR_RETURN(auto field, DecodeField(f, 1, max_depth));
      fields.push_back(std::move(field));
    }
  }
  return std::make_shared<const Schema>(std::move(fields),
                                        DecodeMetadata(schema->custom_metadata()));
}

}  // namespace strata::arrow::ipc::internal
