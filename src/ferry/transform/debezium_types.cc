#include "ferry/transform/debezium_types.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>

#include <nlohmann/json.hpp>

#include "ferry/transform/base64.h"
#include "ferry/transform/civil_time.h"
#include "ferry/transform/decimal_math.h"

namespace ferry::transform {

namespace sj = simdjson::ondemand;
using columnar::TypeId;
using nlohmann::json;

namespace {

std::string_view TrimRowToken(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

ConnectFieldSemantic SemanticOf(const json& field) {
  std::string name = field.contains("name") && field["name"].is_string()
                         ? field["name"].get<std::string>()
                         : std::string();
  if (name == "io.debezium.time.Date" || name == "org.apache.kafka.connect.data.Date") {
    return {.kind = ConnectSemantic::kDays};
  }
  if (name == "io.debezium.time.Timestamp" || name == "org.apache.kafka.connect.data.Timestamp") {
    return {.kind = ConnectSemantic::kMillis};
  }
  if (name == "io.debezium.time.MicroTimestamp") {
    return {.kind = ConnectSemantic::kMicros};
  }
  if (name == "io.debezium.time.NanoTimestamp") {
    return {.kind = ConnectSemantic::kNanos};
  }
  if (name == "io.debezium.data.VariableScaleDecimal") {
    return {.kind = ConnectSemantic::kVariableDecimal};
  }
  if (name == "org.apache.kafka.connect.data.Decimal") {
    ConnectFieldSemantic s{.kind = ConnectSemantic::kDecimalBytes};
    if (field.contains("parameters") && field["parameters"].is_object()) {
      const json& p = field["parameters"];
      if (p.contains("scale") && p["scale"].is_string()) {
        const std::string& text = p["scale"].get_ref<const std::string&>();
        int32_t scale = -1;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), scale);
        if (ec == std::errc() && end == text.data() + text.size() && scale >= 0 && scale <= 38) {
          s.scale = scale;
        }
      }
    }
    return s;
  }
  if (name.empty() && field.contains("type") && field["type"] == "string") {
    return {.kind = ConnectSemantic::kText};
  }
  return {};
}

// Integer text (a JSON number token) as int64; nullopt for fractions, exponents, overflow.
std::optional<int64_t> IntegerToken(std::string_view token) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), n);
  if (ec != std::errc() || end != token.data() + token.size()) {
    return std::nullopt;
  }
  return n;
}

enum class RowValueKind : int { kNumber, kString, kObject, kOther };

}  // namespace

Result<ConnectRowSemantics> ParseConnectEnvelopeSchema(std::string_view schema_json) {
  json j = json::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("fields") || !j["fields"].is_array()) {
    return InvalidArgument("expected a Kafka Connect struct schema with \"fields\"");
  }
  ConnectRowSemantics out;
  for (const json& f : j["fields"]) {
    if (!f.is_object() || !f.contains("field") || !f.contains("fields") ||
        !f["fields"].is_array()) {
      continue;
    }
    RowSemantics* into = f["field"] == "before"  ? &out.before
                         : f["field"] == "after" ? &out.after
                                                 : nullptr;
    if (into == nullptr) {
      continue;
    }
    for (const json& g : f["fields"]) {
      if (g.is_object() && g.contains("field") && g["field"].is_string()) {
        ConnectFieldSemantic s = SemanticOf(g);
        if (s.kind != ConnectSemantic::kNone) {
          (*into)[g["field"].get<std::string>()] = s;
        }
      }
    }
  }
  return out;
}

Result<columnar::Int128> DecimalFromConnectBytes(std::string_view base64) {
  std::string bytes;
  if (!DecodeBase64(base64, &bytes)) {
    return InvalidArgument("expected a Connect Decimal (base64 bytes), found \"{}\"",
                           base64.substr(0, 64));
  }
  if (bytes.empty() || bytes.size() > 16) {
    return InvalidArgument("a Connect Decimal of {} bytes does not fit DECIMAL(38)", bytes.size());
  }
  // Big-endian two's complement: sign-extend from the first byte.
  columnar::UInt128 u = static_cast<uint8_t>(bytes[0]) & 0x80 ? ~columnar::UInt128{0} : 0;
  for (char c : bytes) {
    u = (u << 8) | static_cast<uint8_t>(c);
  }
  return static_cast<columnar::Int128>(u);
}

struct RowRewriter::Parser {
  sj::parser parser;
};

RowRewriter::RowRewriter(RowRewriter&&) noexcept = default;
RowRewriter& RowRewriter::operator=(RowRewriter&&) noexcept = default;
RowRewriter::~RowRewriter() = default;

Result<RowRewriter> RowRewriter::Create(const columnar::Schema& schema,
                                        const std::vector<std::string>& columns, EpochUnit unit,
                                        DecimalHandling decimals) {
  RowRewriter r;
  r.unit_ = unit;
  r.decimals_ = decimals;
  for (const std::string& name : columns) {
    std::optional<int> index = schema.FieldIndex(name);
    if (!index.has_value()) {
      continue;  // JsonDecoder::Create names it
    }
    const columnar::DataType& t = *schema.fields()[static_cast<size_t>(*index)].type;
    if (t.id() == TypeId::kDate || t.id() == TypeId::kTimestamp || t.id() == TypeId::kDecimal) {
      r.targets_.emplace(name, Target{.type = t.id(), .scale = t.scale()});
    }
  }
  r.parser_ = std::make_unique<Parser>();
  return r;
}

Result<std::string_view> RowRewriter::Rewrite(std::string_view object, size_t capacity,
                                              const Semantics* semantics) {
  if (targets_.empty()) {
    return object;
  }
  // Malformed JSON is left to the JSON decoder, which names it: the object goes on as is.
  sj::document doc;
  sj::object obj;
  if (parser_->parser.iterate(object.data(), object.size(), capacity).get(doc) ||
      doc.get_object().get(obj)) {
    return object;
  }
  out_.clear();
  size_t copied = 0;
  for (auto f : obj) {
    if (f.error()) {
      return object;
    }
    sj::field& field = f.value_unsafe();
    std::string_view key;
    if (field.unescaped_key().get(key)) {
      return object;
    }
    auto it = targets_.find(std::string(key));
    if (it == targets_.end()) {
      continue;
    }
    sj::value v = field.value();
    sj::json_type t;
    if (v.type().get(t)) {
      return object;
    }
    std::string_view token = TrimRowToken(v.raw_json_token());
    std::string_view text = token;
    RowValueKind kind = RowValueKind::kOther;
    if (t == sj::json_type::number) {
      kind = RowValueKind::kNumber;
    } else if (t == sj::json_type::string) {
      kind = RowValueKind::kString;
      if (v.get_string().get(text)) {
        return object;
      }
    } else if (t == sj::json_type::object) {
      kind = RowValueKind::kObject;
      sj::object inner;
      if (v.get_object().get(inner) || inner.raw_json().get(token)) {
        return object;
      }
      text = token;
    } else {
      continue;
    }
    ConnectFieldSemantic semantic;
    if (semantics != nullptr) {
      if (auto s = semantics->find(it->first); s != semantics->end()) {
        semantic = s->second;
      }
    }
    Result<bool> converted = Convert(it->second, semantic, static_cast<int>(kind), text);
    if (!converted.ok()) {
      return InvalidArgument("field '{}': {}", key, converted.status().message());
    }
    if (*converted) {
      size_t start = static_cast<size_t>(token.data() - object.data());
      out_.append(object.substr(copied, start - copied));
      out_.append(value_);
      copied = start + token.size();
    }
  }
  if (out_.empty() && copied == 0) {
    return object;
  }
  out_.append(object.substr(copied));
  return std::string_view(out_);
}

Result<bool> RowRewriter::Convert(const Target& target, ConnectFieldSemantic semantic,
                                  int json_kind, std::string_view text) {
  const auto kind = static_cast<RowValueKind>(json_kind);
  value_.clear();
  switch (target.type) {
    case TypeId::kDate: {
      if (kind != RowValueKind::kNumber ||
          (semantic.kind != ConnectSemantic::kNone && semantic.kind != ConnectSemantic::kDays)) {
        return false;
      }
      std::optional<int64_t> days = IntegerToken(text);
      if (!days || *days < DaysFromCivil(0, 1, 1) || *days > DaysFromCivil(9999, 12, 31)) {
        return InvalidArgument(
            "expected a day count (io.debezium.time.Date) from year 0 to "
            "9999, found {}",
            text);
      }
      CivilDate d = CivilFromDays(*days);
      value_ = fmt::format("\"{:04}-{:02}-{:02}\"", d.year, d.month, d.day);
      return true;
    }
    case TypeId::kTimestamp: {
      if (kind != RowValueKind::kNumber) {
        return false;
      }
      int64_t per_unit = 0;  // micros per unit; 0: nanos
      switch (semantic.kind) {
        case ConnectSemantic::kDays:
          per_unit = 86400LL * 1000000;
          break;
        case ConnectSemantic::kMillis:
          per_unit = 1000;
          break;
        case ConnectSemantic::kMicros:
          per_unit = 1;
          break;
        case ConnectSemantic::kNanos:
          break;
        default:
          per_unit = unit_ == EpochUnit::kSeconds  ? 1000000
                     : unit_ == EpochUnit::kMillis ? 1000
                                                   : 1;
      }
      std::optional<int64_t> n = IntegerToken(text);
      int64_t micros = 0;
      if (!n) {
        return InvalidArgument("expected an integer epoch count, found {}", text);
      }
      if (per_unit == 0) {
        micros = FloorDiv(*n, 1000);
      } else if (__builtin_mul_overflow(*n, per_unit, &micros)) {
        return InvalidArgument("{} is out of range for a timestamp", text);
      }
      value_ = std::to_string(micros);
      return true;
    }
    default: {  // kDecimal
      int32_t scale = -1;
      std::string_view bytes = text;
      std::string holder;
      if (kind == RowValueKind::kString) {
        bool base64 =
            semantic.kind == ConnectSemantic::kDecimalBytes ||
            (semantic.kind == ConnectSemantic::kNone && decimals_ == DecimalHandling::kPrecise);
        if (!base64) {
          return false;
        }
        scale = semantic.scale >= 0 ? semantic.scale : target.scale;
      } else if (kind == RowValueKind::kObject) {
        // io.debezium.data.VariableScaleDecimal: {"scale": 2, "value": "BNI="}.
        json j = json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.contains("scale") || !j["scale"].is_number_integer() ||
            !j.contains("value") || !j["value"].is_string()) {
          return InvalidArgument(
              "expected a VariableScaleDecimal {{\"scale\": <int>, \"value\": <base64>}}");
        }
        int64_t s = j["scale"].get<int64_t>();
        if (s < 0 || s > 38) {
          return InvalidArgument("VariableScaleDecimal scale {} is out of range", s);
        }
        scale = static_cast<int32_t>(s);
        holder = j["value"].get<std::string>();
        bytes = holder;
      } else {
        return false;
      }
      FERRY_ASSIGN_OR_RETURN(columnar::Int128 unscaled, DecimalFromConnectBytes(bytes));
      value_ = DecimalToText(unscaled, scale);
      return true;
    }
  }
}

}  // namespace ferry::transform
