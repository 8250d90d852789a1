#include "ferry/transform/json_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/json_infer.h"
#include "ferry/transform/json_plan.h"
#include "ferry/transform/json_scalar.h"
#include "ferry/transform/json_syntax.h"

namespace ferry::transform {

namespace sj = simdjson::ondemand;
using columnar::Column;

namespace {

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

class JsonDecoder::Impl {
 public:
  explicit Impl(JsonPlan plan, columnar::SchemaPtr schema)
      : plan_(std::move(plan)), schema_(std::move(schema)) {}

  // The decoder's observations (Decoder::observations_), filled when options.observe is on.
  void set_observations(std::vector<FieldObservation>* observations) {
    observations_ = observations;
  }

  const std::vector<int>& output_columns() const { return plan_.output_columns; }

  Status Append(std::string_view json, columnar::RecordBatch* batch) {
    if (batch->schema_ptr() != checked_schema_) {
      if (!batch->schema().Equals(*schema_)) {
        return Internal("json decoder: the batch's schema differs from the decoder's");
      }
      checked_schema_ = batch->schema_ptr();
    }
    root_columns_.clear();
    for (int c : plan_.root_columns) {
      root_columns_.push_back(batch->mutable_column(c));
    }
    Column* first = batch->mutable_column(plan_.output_columns[0]);
    int64_t base = first->length();
    error_path_.clear();  // segments, innermost first
    Status st = DecodeMessage(json, base, batch);
    if (!st.ok()) {
      // Also when a column has `base` rows: an unfinished nested row leaves children longer.
      for (int c : plan_.output_columns) {
        batch->mutable_column(c)->Truncate(base);
      }
      if (!error_path_.empty()) {
        std::string path;
        for (auto it = error_path_.rbegin(); it != error_path_.rend(); ++it) {
          path += *it;
        }
        return InvalidArgument("field '{}': {}", std::string_view(path).substr(1), st.message());
      }
    }
    return st;
  }

 private:
  Status DecodeMessage(std::string_view json, int64_t base, columnar::RecordBatch* batch) {
    // simdjson reads up to SIMDJSON_PADDING bytes past the end: copy into a padded buffer.
    size_t need = json.size() + simdjson::SIMDJSON_PADDING;
    if (buffer_size_ < need) {
      buffer_size_ = std::max(need, buffer_size_ * 2);
      buffer_ = std::make_unique<char[]>(buffer_size_);
      std::memset(buffer_.get(), 0, buffer_size_);
    }
    std::memcpy(buffer_.get(), json.data(), json.size());
    std::memset(buffer_.get() + json.size(), 0, simdjson::SIMDJSON_PADDING);
    sj::document doc;
    if (auto e = parser_.iterate(buffer_.get(), json.size(), need).get(doc)) {
      return Malformed(e);
    }
    sj::object root;
    if (auto e = doc.get_object().get(root)) {
      return e == simdjson::INCORRECT_TYPE
                 ? InvalidArgument("malformed message: expected a JSON object")
                 : Malformed(e);
    }
    unknown_.clear();
    FERRY_RETURN_IF_ERROR(DecodeFields(
        plan_.nodes[0], root, base, [this](size_t i) { return root_columns_[i]; }, true));
    const char* trailing = nullptr;
    if (!doc.current_location().get(trailing)) {
      return InvalidArgument("malformed message: unexpected text after the JSON object");
    }
    if (plan_.unknown_column >= 0) {
      auto* col = batch->mutable_column(plan_.unknown_column)->As<columnar::BinaryColumn>();
      if (unknown_.empty()) {
        col->AppendNull();
      } else {
        unknown_[0] = '{';
        unknown_.push_back('}');
        col->Append(unknown_);
      }
    }
    return Status::OK();
  }

  // The content of a string value. Stage 1 has checked the whole message (UTF-8, no control
  // characters in strings), so a string token without a backslash is its own content: it is
  // taken from the message as is, without the copy into simdjson's string buffer. Otherwise
  // the string is unescaped; that also consumes the value.
  // REQUIRES: v is a string.
  static simdjson::error_code StringContent(sj::value& v, std::string_view* out) {
    std::string_view raw = v.raw_json_token();  // the quoted string, up to the next structural
    std::string_view token = TrimRight(raw);
    if (token.size() >= 2 && token.back() == '"' && !ColonFollows(raw) &&
        std::memchr(token.data() + 1, '\\', token.size() - 2) == nullptr) {
      *out = token.substr(1, token.size() - 2);
      return simdjson::SUCCESS;
    }
    return v.get_string().get(*out);
  }

  // Whether the structural character after a value's raw token is ':'. On-Demand skips a value
  // that was not read, but takes a skipped string followed by ':' for a key and goes on skipping
  // past the end of the enclosing object (json_iterator::skip_child), which would accept
  // `{"o": {"a": "x": 1}}, "b": 2}`. A string read from its token must be consumed then.
  // The character is in the message or its zero padding.
  static bool ColonFollows(std::string_view raw_token) {
    return raw_token.data()[raw_token.size()] == ':';
  }

  // raw_json_string::unsafe_is_equal without its call to memcmp, which costs more than the
  // comparison on keys of a few bytes. REQUIRES: `name` has no '"' or '\\'.
  static bool RawKeyIs(sj::raw_json_string key, std::string_view name) {
    const char* r = key.raw();
    for (size_t i = 0; i < name.size(); i++) {
      if (r[i] != name[i]) {
        return false;  // also where the key ends: name has no quote
      }
    }
    return r[name.size()] == '"';
  }

  static Status Malformed(simdjson::error_code e) {
    return InvalidArgument("malformed JSON: {}", simdjson::error_message(e));
  }

  // Fields of an object into the struct `node`; `column_at(i)` is the column of its i-th field,
  // which holds `base` rows before this object.
  template <typename ColumnAt>
  Status DecodeFields(const JsonPlanNode& node, sj::object& obj, int64_t base, ColumnAt column_at,
                      bool root) {
    size_t expect = 0;
    const size_t n = node.children.size();
    for (auto field_result : obj) {
      // Used in place: a copy of the field costs a store-forwarding stall per field.
      if (auto e = field_result.error()) {
        return Malformed(e);
      }
      sj::field& field = field_result.value_unsafe();
      // Messages usually list fields in the same order: try the one after the last match first,
      // on the raw key bytes; unescape the key only when that guess fails.
      int idx = -1;
      std::string_view key;
      if (expect < n && node.names.plain(expect) &&
          RawKeyIs(field.key(), node.names.name(expect))) {
        idx = static_cast<int>(expect);
      } else {
        if (auto e = field.unescaped_key().get(key)) {
          return Malformed(e);
        }
        idx = node.names.Find(key);
      }
      if (idx < 0 && plan_.options.observe) {
        idx = FindChildIgnoringCase(node, key);
      }
      if (idx < 0) {
        bool keep = root && plan_.unknown_column >= 0;
        if (plan_.options.observe) {
          FERRY_RETURN_IF_ERROR(ObserveUnknown(node, key, field.value(), keep));
        } else {
          FERRY_RETURN_IF_ERROR(SkipOrKeep(key, field.value(), keep).status());
        }
        continue;
      }
      expect = static_cast<size_t>(idx) + 1;
      Column* col = column_at(static_cast<size_t>(idx));
      if (col->length() > base) {
        col->Truncate(base);  // a repeated key: the last one wins
      }
      const JsonPlanNode& child = plan_.nodes[node.children[static_cast<size_t>(idx)]];
      Status st = DecodeValue(child, field.value(), col);
      if (!st.ok()) {
        error_path_.push_back(fmt::format(".{}", child.name));
        return st;
      }
    }
    for (size_t i = 0; i < n; i++) {
      Column* col = column_at(i);
      if (col->length() == base) {
        const JsonPlanNode& child = plan_.nodes[node.children[i]];
        if (!child.nullable) {
          error_path_.push_back(fmt::format(".{}", child.name));
          return InvalidArgument("missing required field");
        }
        col->AppendNull();
      }
    }
    return Status::OK();
  }

  Status DecodeValue(const JsonPlanNode& n, sj::value& v, Column* col) {
    sj::json_type t;
    if (auto e = v.type().get(t)) {
      return Malformed(e);
    }
    if (t == sj::json_type::null) {
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) {
        return InvalidArgument("malformed JSON: bad literal '{}'", Token(v));
      }
      if (!n.nullable) {
        return InvalidArgument("null in a NOT NULL field");
      }
      col->AppendNull();
      return Status::OK();
    }
    switch (n.kind) {
      case JsonNodeKind::kString:
      case JsonNodeKind::kJsonText:
        return DecodeString(n, v, t, col);
      case JsonNodeKind::kStruct:
      case JsonNodeKind::kList:
      case JsonNodeKind::kMap:
        return DecodeNested(n, v, t, col);
      default:
        return DecodeScalar(n, v, t, col);
    }
  }

  Status DecodeString(const JsonPlanNode& n, sj::value& v, sj::json_type t, Column* col) {
    auto* out = col->As<columnar::BinaryColumn>();
    if (t == sj::json_type::string && n.kind == JsonNodeKind::kString) {
      std::string_view s;
      if (auto e = StringContent(v, &s)) {
        return Malformed(e);
      }
      out->Append(s);
      return Status::OK();
    }
    if (n.kind == JsonNodeKind::kString && !plan_.options.numbers_as_strings &&
        (t == sj::json_type::number || t == sj::json_type::boolean)) {
      return TypeError("a string", t, v);
    }
    // Numbers and booleans as written; objects and arrays as their JSON text.
    FERRY_ASSIGN_OR_RETURN(std::string_view raw, RawValue(v, t));
    out->Append(raw);
    return Status::OK();
  }

  Status DecodeScalar(const JsonPlanNode& n, sj::value& v, sj::json_type t, Column* col) {
    bool from_string = t == sj::json_type::string;
    std::string_view text;
    if (from_string) {
      if (auto e = StringContent(v, &text)) {
        return Malformed(e);
      }
    } else if (t == sj::json_type::number) {
      text = Token(v);
    }
    Status st = DecodeScalarText(n, v, t, from_string, text, col);
    if (!st.ok() && plan_.options.observe_misfits && (from_string || t == sj::json_type::number)) {
      // A value that did not decode: reported when a wider type would hold it.
      if (columnar::DataTypePtr needed = NeededType(n, text, from_string)) {
        observations_->push_back(
            {.path = plan_.Path(IndexOf(n)), .type = std::move(needed), .missing = false});
      }
    }
    return st;
  }

  Status DecodeScalarText(const JsonPlanNode& n, sj::value& v, sj::json_type t, bool from_string,
                          std::string_view text, Column* col) {
    switch (n.kind) {
      case JsonNodeKind::kBoolean: {
        if (t == sj::json_type::boolean) {
          bool b = false;
          if (v.get_bool().get(b)) {
            return InvalidArgument("malformed JSON: bad literal '{}'", Token(v));
          }
          col->As<columnar::BooleanColumn>()->Append(b ? 1 : 0);
          return Status::OK();
        }
        if (from_string && plan_.options.strings_as_numbers) {
          return AppendBooleanText(text, col);
        }
        return TypeError("a boolean", t, v);
      }
      case JsonNodeKind::kFloat32:
      case JsonNodeKind::kFloat64:
        if (t == sj::json_type::number) {
          return DecodeFloat(n, v, col);
        }
        if (from_string && plan_.options.strings_as_numbers) {
          return AppendFloatText(n, text, col);
        }
        return TypeError("a number", t, v);
      case JsonNodeKind::kDecimal:
        if (t == sj::json_type::number || (from_string && plan_.options.strings_as_numbers)) {
          return AppendDecimalText(n, text, from_string, col);
        }
        return TypeError("a decimal number", t, v);
      case JsonNodeKind::kBinary:
      case JsonNodeKind::kFixedBinary:
        return from_string ? AppendBase64Text(n, text, col) : TypeError("a base64 string", t, v);
      case JsonNodeKind::kDate:
        if (!from_string) {
          return TypeError("a date string", t, v);
        }
        if (plan_.options.dates_keep_time && text.size() > 10 &&
            NeededType(n, text, true) != nullptr) {
          return InvalidArgument("expected a date, found a time of day in \"{}\"", text);
        }
        return AppendDateText(plan_, text, col);
      case JsonNodeKind::kTimestamp:
        if (from_string) {
          return AppendTimestampText(plan_, n, text, col);
        }
        if (t == sj::json_type::number) {
          return AppendEpochNumber(plan_, n, text, false, col);
        }
        return TypeError("a timestamp", t, v);
      default:
        if (t == sj::json_type::number) {
          return DecodeInteger(n, v, text, col);
        }
        if (from_string && plan_.options.strings_as_numbers) {
          return AppendIntegerText(n, text, true, col);
        }
        return TypeError("an integer", t, v);
    }
  }

  Status DecodeInteger(const JsonPlanNode& n, sj::value& v, std::string_view token, Column* col) {
    // Fast path: simdjson's integer parser; anything unusual (fractions, exponents, 64-bit
    // overflow) goes through the exact text parser, which also range-checks.
    int64_t i = 0;
    if (n.kind == JsonNodeKind::kInt64 && !v.get_int64().get(i)) {
      col->As<columnar::Int64Column>()->Append(i);
      return Status::OK();
    }
    if (n.kind == JsonNodeKind::kInt32 && !v.get_int64().get(i) && i >= INT32_MIN &&
        i <= INT32_MAX) {
      col->As<columnar::Int32Column>()->Append(static_cast<int32_t>(i));
      return Status::OK();
    }
    return AppendIntegerText(n, token, false, col);
  }

  Status DecodeFloat(const JsonPlanNode& n, sj::value& v, Column* col) {
    double d = 0;
    if (v.get_double().get(d)) {
      return InvalidArgument("number {} is out of range for {}", Token(v), KindName(n.kind));
    }
    if (n.kind == JsonNodeKind::kFloat64) {
      col->As<columnar::DoubleColumn>()->Append(d);
      return Status::OK();
    }
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
      return InvalidArgument("number {} is out of range for FLOAT", Token(v));
    }
    col->As<columnar::FloatColumn>()->Append(static_cast<float>(d));
    return Status::OK();
  }

  Status DecodeNested(const JsonPlanNode& n, sj::value& v, sj::json_type t, Column* col) {
    if (n.kind == JsonNodeKind::kList) {
      if (t != sj::json_type::array) {
        return TypeError("an array", t, v);
      }
      return DecodeList(n, v, col->As<columnar::ListColumn>());
    }
    if (t != sj::json_type::object) {
      return TypeError("an object", t, v);
    }
    sj::object obj;
    if (auto e = v.get_object().get(obj)) {
      return Malformed(e);
    }
    if (n.kind == JsonNodeKind::kMap) {
      return DecodeMap(n, obj, col->As<columnar::MapColumn>());
    }
    auto* sc = col->As<columnar::StructColumn>();
    FERRY_RETURN_IF_ERROR(DecodeFields(
        n, obj, sc->length(), [sc](size_t i) { return sc->mutable_child(static_cast<int>(i)); },
        false));
    sc->FinishRow();
    return Status::OK();
  }

  Status DecodeList(const JsonPlanNode& n, sj::value& v, columnar::ListColumn* list) {
    sj::array arr;
    if (auto e = v.get_array().get(arr)) {
      return Malformed(e);
    }
    const JsonPlanNode& element = plan_.nodes[n.children[0]];
    size_t i = 0;
    for (auto element_result : arr) {
      sj::value item;
      if (auto e = std::move(element_result).get(item)) {
        return Malformed(e);
      }
      Status st = DecodeValue(element, item, list->mutable_child());
      if (!st.ok()) {
        error_path_.push_back(fmt::format("[{}]", i));
        return st;
      }
      i++;
    }
    list->FinishRow();
    return Status::OK();
  }

  Status DecodeMap(const JsonPlanNode& n, sj::object& obj, columnar::MapColumn* map) {
    auto* keys = map->mutable_keys()->As<columnar::BinaryColumn>();
    const JsonPlanNode& value_node = plan_.nodes[n.children[1]];
    int64_t first = keys->length();
    for (auto field_result : obj) {
      sj::field field;
      std::string_view key;
      if (auto e = std::move(field_result).get(field)) {
        return Malformed(e);
      }
      if (auto e = field.unescaped_key().get(key)) {
        return Malformed(e);
      }
      keys->Append(key);
      Status st = DecodeValue(value_node, field.value(), map->mutable_values());
      if (!st.ok()) {
        error_path_.push_back(fmt::format(".{}", key));
        return st;
      }
    }
    // Spark refuses duplicate map keys (spark.sql.mapKeyDedupPolicy=EXCEPTION).
    if (keys->length() - first > 1) {
      map_keys_.clear();
      for (int64_t i = first; i < keys->length(); i++) {
        map_keys_.push_back(keys->Value(i));
      }
      std::sort(map_keys_.begin(), map_keys_.end());
      auto dup = std::adjacent_find(map_keys_.begin(), map_keys_.end());
      if (dup != map_keys_.end()) {
        return InvalidArgument("duplicate map key \"{}\"", *dup);
      }
    }
    map->FinishRow();
    return Status::OK();
  }

  // An unknown field: checked for syntax, and kept in the unknown-fields object if asked.
  Result<std::string_view> SkipOrKeep(std::string_view key, sj::value v, bool keep) {
    sj::json_type t;
    if (auto e = v.type().get(t)) {
      return Malformed(e);
    }
    Result<std::string_view> raw = RawValue(v, t);
    if (!raw.ok()) {
      error_path_.push_back(fmt::format(".{}", key));
      return raw.status();
    }
    if (keep) {
      unknown_.push_back(',');
      unknown_.append(columnar::EncodeJsonString(key));
      unknown_.push_back(':');
      unknown_.append(*raw);
    }
    return raw;
  }

  uint32_t IndexOf(const JsonPlanNode& node) const {
    return static_cast<uint32_t>(&node - plan_.nodes.data());
  }

  // An unknown field of struct `node`: skipped (or kept) as usual, and reported with the type
  // its value asks for.
  Status ObserveUnknown(const JsonPlanNode& node, std::string_view key, sj::value v, bool keep) {
    FERRY_ASSIGN_OR_RETURN(std::string_view raw, SkipOrKeep(key, v, keep));
    FieldObservation seen{.path = plan_.Path(IndexOf(node)), .missing = true};
    seen.path.emplace_back(key);
    Result<columnar::DataTypePtr> type = InferJsonType(raw);
    if (!type.ok()) {
      error_path_.push_back(fmt::format(".{}", key));
      return type.status();
    }
    seen.type = std::move(*type);
    observations_->push_back(std::move(seen));
    return Status::OK();
  }

  // The JSON text of a value, syntax-checked (On-Demand does not check what it skips).
  Result<std::string_view> RawValue(sj::value& v, sj::json_type t) {
    std::string_view raw;
    if (t == sj::json_type::object) {
      sj::object obj;
      if (auto e = v.get_object().get(obj); e || obj.raw_json().get(raw)) {
        return Malformed(e ? e : simdjson::TAPE_ERROR);
      }
    } else if (t == sj::json_type::array) {
      sj::array arr;
      if (auto e = v.get_array().get(arr); e || arr.raw_json().get(raw)) {
        return Malformed(e ? e : simdjson::TAPE_ERROR);
      }
    } else {
      std::string_view token = v.raw_json_token();
      if (t == sj::json_type::string && ColonFollows(token)) {
        // Consumed, so that the enclosing object or array refuses the ':' after it.
        sj::raw_json_string consumed;
        if (auto e = v.get_raw_json_string().get(consumed)) {
          return Malformed(e);
        }
      }
      raw = TrimRight(token);
    }
    if (!CheckJsonSyntax(raw, plan_.options.max_depth, &syntax_error_)) {
      return InvalidArgument("malformed JSON: {}", syntax_error_);
    }
    return raw;
  }

  static std::string_view Token(sj::value& v) { return TrimRight(v.raw_json_token()); }

  Status TypeError(std::string_view expected, sj::json_type t, sj::value& v) {
    std::string_view token = Token(v);
    std::string shown(token.substr(0, 64));
    if (token.size() > 64) {
      shown += "...";
    }
    switch (t) {
      case sj::json_type::object:
        return InvalidArgument("expected {}, found an object", expected);
      case sj::json_type::array:
        return InvalidArgument("expected {}, found an array", expected);
      case sj::json_type::string:
        return InvalidArgument("expected {}, found string {}", expected, shown);
      case sj::json_type::number:
        return InvalidArgument("expected {}, found number {}", expected, shown);
      default:
        return InvalidArgument("expected {}, found {}", expected, shown);
    }
  }

  JsonPlan plan_;
  columnar::SchemaPtr schema_;
  std::vector<FieldObservation>* observations_ = nullptr;
  columnar::SchemaPtr checked_schema_;
  sj::parser parser_;
  std::unique_ptr<char[]> buffer_;
  size_t buffer_size_ = 0;
  // Scratch reused across messages.
  std::vector<Column*> root_columns_;
  std::vector<std::string_view> map_keys_;
  std::string unknown_;                  // ",\"k\":v,..." while decoding; braces added at the end
  std::vector<std::string> error_path_;  // on errors: ".name", "[3]", innermost first
  std::string syntax_error_;
};

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Create(columnar::SchemaPtr schema,
                                                         JsonDecoderOptions options) {
  FERRY_ASSIGN_OR_RETURN(JsonPlan plan, JsonPlan::Build(*schema, std::move(options)));
  if (plan.output_columns.empty()) {
    return InvalidArgument("json decoder: no columns to fill");
  }
  auto impl = std::make_unique<Impl>(std::move(plan), std::move(schema));
  return std::unique_ptr<JsonDecoder>(new JsonDecoder(std::move(impl)));
}

JsonDecoder::JsonDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->set_observations(&observations_);
}
JsonDecoder::~JsonDecoder() = default;

const std::vector<int>& JsonDecoder::output_columns() const {
  return impl_->output_columns();
}

Status JsonDecoder::Append(std::string_view json, columnar::RecordBatch* batch) {
  return impl_->Append(json, batch);
}

}  // namespace ferry::transform
