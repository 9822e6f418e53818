#include "common/json_fast_parse.h"

#include <simdjson.h>
#include <memory>

namespace strata {

namespace {

// Bodies larger than this get a parser of their own, so that a worker thread does not keep
// a buffer sized for the largest body it ever parsed.
constexpr size_t kReusedParserMaxBytes = size_t{1} << 20;

template <typename Json>
bool Convert(simdjson::dom::element e, int depth, int max_depth, Json* out) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      if (depth + 1 > max_depth) return false;
      *out = Json::object();
      for (simdjson::dom::key_value_pair kv : simdjson::dom::object(e)) {
        Json& slot = (*out)[std::string(kv.key)];
        if (!Convert(kv.value, depth + 1, max_depth, &slot)) return false;
      }
      return true;
    }
    case element_type::ARRAY: {
      if (depth + 1 > max_depth) return false;
      simdjson::dom::array a(e);
      *out = Json::array();
      auto& v = out->template get_ref<typename Json::array_t&>();
      v.reserve(a.size());
      for (simdjson::dom::element x : a) {
        v.emplace_back();
        if (!Convert(x, depth + 1, max_depth, &v.back())) return false;
      }
      return true;
    }
    case element_type::INT64: {
      const int64_t i = int64_t(e);
      if (i >= 0) {
        *out = static_cast<uint64_t>(i);
      } else {
        *out = i;
      }
      return true;
    }
    case element_type::UINT64:
      *out = uint64_t(e);
      return true;
    case element_type::DOUBLE:
      *out = double(e);
      return true;
    case element_type::STRING:
      *out = std::string(std::string_view(e));
      return true;
    case element_type::BOOL:
      *out = bool(e);
      return true;
    case element_type::NULL_VALUE:
      *out = nullptr;
      return true;
  }
  return false;
}

// The elements of `a` as floats, or false when one is not a number.
bool NumbersOf(simdjson::dom::array a, std::vector<float>* out) {
  using simdjson::dom::element_type;
  out->clear();
  out->reserve(a.size());
  for (simdjson::dom::element x : a) {
    switch (x.type()) {
      case element_type::INT64:
        out->push_back(static_cast<float>(static_cast<double>(int64_t(x))));
        break;
      case element_type::UINT64:
        out->push_back(static_cast<float>(static_cast<double>(uint64_t(x))));
        break;
      case element_type::DOUBLE:
        out->push_back(static_cast<float>(double(x)));
        break;
      default:
        out->clear();
        return false;
    }
  }
  return !out->empty();
}

template <typename Json>
std::optional<Json> Parse(std::string_view text, int max_depth, std::string_view floats_key = {},
                          std::vector<float>* floats = nullptr) {
  thread_local simdjson::dom::parser reused;
  std::unique_ptr<simdjson::dom::parser> own;
  simdjson::dom::parser* parser = &reused;
  if (text.size() > kReusedParserMaxBytes) {
    own = std::make_unique<simdjson::dom::parser>();
    parser = own.get();
  }
  simdjson::dom::element root;
  // realloc_if_needed: simdjson reads up to SIMDJSON_PADDING bytes past the end, so it copies
  // the text into a padded buffer of its own.
  if (parser->parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root)) {
    return std::nullopt;
  }
  Json out;
  if (floats != nullptr && root.type() == simdjson::dom::element_type::OBJECT && max_depth >= 2) {
    floats->clear();
    out = Json::object();
    for (simdjson::dom::key_value_pair kv : simdjson::dom::object(root)) {
      Json& slot = out[std::string(kv.key)];
      if (kv.key == floats_key) {
        if (kv.value.type() == simdjson::dom::element_type::ARRAY &&
            NumbersOf(simdjson::dom::array(kv.value), floats)) {
          slot = Json::array({0});
          continue;
        }
        floats->clear();
      }
      if (!Convert(kv.value, 1, max_depth, &slot)) return std::nullopt;
    }
    return out;
  }
  if (!Convert(root, 0, max_depth, &out)) return std::nullopt;
  return out;
}

}  // namespace

std::optional<nlohmann::ordered_json> FastParseOrderedJsonWithFloats(std::string_view text,
                                                                     std::string_view key,
                                                                     std::vector<float>* floats,
                                                                     int max_depth) {
  floats->clear();
  return Parse<nlohmann::ordered_json>(text, max_depth, key, floats);
}

std::optional<nlohmann::ordered_json> FastParseOrderedJson(std::string_view text, int max_depth) {
  return Parse<nlohmann::ordered_json>(text, max_depth);
}

}  // namespace strata
