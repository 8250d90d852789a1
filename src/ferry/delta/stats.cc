#include "ferry/delta/stats.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <variant>

#include <nlohmann/json.hpp>

#include "ferry/base/bytes.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/value_format.h"

namespace ferry::delta {

using columnar::Column;
using columnar::TypeId;

struct StatsCollector::Node {
  std::string name;
  columnar::DataTypePtr type;
  int field_index = 0;                          // in the parent struct (or the batch)
  std::vector<std::unique_ptr<Node>> children;  // struct fields with stats
  // A leaf filled by TakeParquetStatistics: its Parquet leaf ordinal and path; else -1.
  int parquet_leaf = -1;
  std::vector<std::string> path;
  bool scan = true;  // Update reads this leaf (or a leaf under this struct)

  // Leaf accumulators.
  int64_t null_count = 0;
  bool has_value = false;
  bool no_bounds = false;  // NaN or infinity seen
  int64_t int_min = 0, int_max = 0;
  double double_min = 0, double_max = 0;
  columnar::Int128 decimal_min = 0, decimal_max = 0;
  std::string string_min, string_max;

  bool is_struct() const { return type->id() == TypeId::kStruct; }
};

namespace {

using Node = StatsCollector::Node;

bool HasMinMax(TypeId id) {
  switch (id) {
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kFloat32:
    case TypeId::kFloat64:
    case TypeId::kDecimal:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kString:
      return true;
    default:
      return false;
  }
}

// Parquet leaves of a column of this type (schema_writer.h: a list's or map's nested fields).
int ParquetLeaves(const columnar::DataType& type) {
  if (type.fields().empty()) {
    return 1;
  }
  int n = 0;
  for (const columnar::Field& field : type.fields()) {
    n += ParquetLeaves(*field.type);
  }
  return n;
}

// A leaf whose Parquet statistics are Delta's: not a list or map (Parquet counts their repeated
// leaves) and not a float (Parquet skips NaN where Delta drops the bounds, and writes a zero min
// as -0.0).
bool FromParquet(TypeId id) {
  switch (id) {
    case TypeId::kFloat32:
    case TypeId::kFloat64:
    case TypeId::kStruct:
    case TypeId::kList:
    case TypeId::kMap:
      return false;
    default:
      return true;
  }
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Spark's truncateSchema (first `limit` leaves) or the delta.dataSkippingStatsColumns filter.
struct NodeBuilder {
  const StatsOptions& options;
  bool parquet_leaves = false;
  int64_t leaves = 0;

  static bool Matches(const std::vector<std::string>& names, const std::string& path) {
    std::string lower = Lower(path);
    for (const std::string& name : names) {
      std::string wanted = Lower(name);
      if (lower == wanted || lower.rfind(wanted + ".", 0) == 0) {
        return true;
      }
    }
    return false;
  }
  // `path` is an always-collected column or a struct holding one.
  bool Always(const std::string& path) const {
    std::string lower = Lower(path);
    for (const std::string& name : options.always_columns) {
      std::string wanted = Lower(name);
      if (wanted == lower || wanted.rfind(lower + ".", 0) == 0) {
        return true;
      }
    }
    return Matches(options.always_columns, path);
  }
  bool Room() const {
    return options.stats_columns.has_value() || options.num_indexed_cols < 0 ||
           leaves < options.num_indexed_cols;
  }

  // `parent_names`: the names from the top level down to `fields`; `first_leaf`: the Parquet
  // leaf ordinal of the first leaf of fields[0].
  std::vector<std::unique_ptr<Node>> Build(const std::vector<columnar::Field>& fields,
                                           const std::string& parent,
                                           const std::vector<std::string>& parent_names,
                                           int first_leaf) {
    std::vector<std::unique_ptr<Node>> out;
    int next_leaf = first_leaf;
    for (size_t i = 0; i < fields.size(); ++i) {
      const columnar::Field& field = fields[i];
      const int leaf = next_leaf;
      next_leaf += ParquetLeaves(*field.type);
      std::string path = parent.empty() ? field.name : parent + "." + field.name;
      std::vector<std::string> names = parent_names;
      names.push_back(field.name);
      const bool room = Room();
      if (!room && !Always(path)) {
        continue;
      }
      auto node = std::make_unique<Node>();
      node->name = field.name;
      node->type = field.type;
      node->field_index = static_cast<int>(i);
      if (field.type->id() == TypeId::kStruct) {
        node->children = Build(field.type->fields(), path, names, leaf);
        if (node->children.empty()) {
          continue;
        }
        node->scan = std::any_of(node->children.begin(), node->children.end(),
                                 [](const auto& child) { return child->scan; });
      } else {
        bool selected =
            options.stats_columns.has_value() ? Matches(*options.stats_columns, path) : room;
        if (selected) {
          leaves++;
        } else if (!Matches(options.always_columns, path)) {
          continue;
        }
        if (parquet_leaves && FromParquet(field.type->id())) {
          node->parquet_leaf = leaf;
          node->path = std::move(names);
          node->scan = false;
        }
      }
      out.push_back(std::move(node));
    }
    return out;
  }
};

template <typename T>
void UpdateNumbers(Node* node, const Column& column, const std::vector<uint8_t>* parent_valid) {
  const auto* c = column.As<columnar::PrimitiveColumn<T>>();
  for (int64_t row = 0; row < column.length(); ++row) {
    if (column.IsNull(row) || (parent_valid != nullptr && (*parent_valid)[row] == 0)) {
      node->null_count++;
      continue;
    }
    T v = c->Value(row);
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(v)) {
        node->no_bounds = true;
        continue;
      }
      double d = static_cast<double>(v);
      node->double_min = node->has_value ? std::min(node->double_min, d) : d;
      node->double_max = node->has_value ? std::max(node->double_max, d) : d;
    } else if constexpr (std::is_same_v<T, columnar::Int128>) {
      node->decimal_min = node->has_value ? std::min(node->decimal_min, v) : v;
      node->decimal_max = node->has_value ? std::max(node->decimal_max, v) : v;
    } else {
      auto i = static_cast<int64_t>(v);
      node->int_min = node->has_value ? std::min(node->int_min, i) : i;
      node->int_max = node->has_value ? std::max(node->int_max, i) : i;
    }
    node->has_value = true;
  }
}

void UpdateStrings(Node* node, const Column& column, const std::vector<uint8_t>* parent_valid) {
  const auto* c = column.As<columnar::BinaryColumn>();
  // The bounds of this column are views into it while it is scanned, copied into the node once.
  std::optional<std::string_view> min;
  std::optional<std::string_view> max;
  if (node->has_value) {
    min = node->string_min;
    max = node->string_max;
  }
  for (int64_t row = 0; row < column.length(); ++row) {
    if (column.IsNull(row) || (parent_valid != nullptr && (*parent_valid)[row] == 0)) {
      node->null_count++;
      continue;
    }
    std::string_view v = c->Value(row);
    if (!min || BytesLess(v, *min)) {
      min = v;
    }
    if (!max || BytesLess(*max, v)) {
      max = v;
    }
  }
  if (min) {
    // assign() from a view into the string itself is safe (std::string handles the overlap).
    node->string_min.assign(*min);
    node->string_max.assign(*max);
    node->has_value = true;
  }
}

void UpdateNode(Node* node, const Column& column, const std::vector<uint8_t>* parent_valid) {
  TypeId id = column.type_id();
  if (id == TypeId::kStruct) {
    std::vector<uint8_t> valid(column.validity());
    if (parent_valid != nullptr) {
      for (size_t i = 0; i < valid.size(); ++i) {
        valid[i] = static_cast<uint8_t>(valid[i] & (*parent_valid)[i]);
      }
    }
    const auto* s = column.As<columnar::StructColumn>();
    for (auto& child : node->children) {
      if (child->scan) {
        UpdateNode(child.get(), s->child(child->field_index), &valid);
      }
    }
    return;
  }
  if (!HasMinMax(id)) {
    for (int64_t row = 0; row < column.length(); ++row) {
      if (column.IsNull(row) || (parent_valid != nullptr && (*parent_valid)[row] == 0)) {
        node->null_count++;
      }
    }
    return;
  }
  if (id == TypeId::kString) {
    UpdateStrings(node, column, parent_valid);
    return;
  }
  columnar::VisitPrimitive(id, [&]<typename C>(C*) {
    UpdateNumbers<typename C::ValueType>(node, column, parent_valid);
  });
}

std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string FloatText(double v, bool single) {
  char buf[64];
  auto [end, ec] = single ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                          : std::to_chars(buf, buf + sizeof(buf), v);
  std::string text(buf, end);
  if (text.find_first_of(".e") == std::string::npos) {
    text += ".0";
  }
  return text;
}

// The JSON text of a leaf's min (or max), nullopt when it has none.
std::optional<std::string> Bound(const Node& node, bool max, int prefix) {
  if (!node.has_value || node.no_bounds) {
    return std::nullopt;
  }
  const columnar::DataType& type = *node.type;
  switch (type.id()) {
    case TypeId::kFloat32:
    case TypeId::kFloat64:
      return FloatText(max ? node.double_max : node.double_min, type.id() == TypeId::kFloat32);
    case TypeId::kDecimal:
      return FormatDecimal(max ? node.decimal_max : node.decimal_min, type.scale());
    case TypeId::kDate:
      return JsonString(FormatDate(static_cast<int32_t>(max ? node.int_max : node.int_min)));
    case TypeId::kTimestamp:
      return JsonString(FormatTimestampMicros(
          max ? node.int_max : node.int_min,
          type.utc_adjusted() ? TimestampStyle::kStatsMillis : TimestampStyle::kStatsMillisNtz));
    case TypeId::kString: {
      if (!max) {
        return JsonString(TruncateMinString(node.string_min, prefix));
      }
      auto truncated = TruncateMaxString(node.string_max, prefix);
      return truncated ? std::optional<std::string>(JsonString(*truncated)) : std::nullopt;
    }
    default:
      return std::to_string(max ? node.int_max : node.int_min);
  }
}

enum class Stat { kMin, kMax, kNullCount };

// `"name":value` pairs of one struct level, or "" when nothing is there.
std::string Members(const std::vector<std::unique_ptr<Node>>& nodes, Stat stat, int prefix) {
  std::string out;
  for (const auto& node : nodes) {
    std::optional<std::string> value;
    if (node->is_struct()) {
      std::string inner = Members(node->children, stat, prefix);
      if (!inner.empty()) {
        value = "{" + inner + "}";
      }
    } else if (stat == Stat::kNullCount) {
      value = std::to_string(node->null_count);
    } else {
      value = Bound(*node, stat == Stat::kMax, prefix);
    }
    if (value.has_value()) {
      if (!out.empty()) {
        out += ',';
      }
      out += JsonString(node->name) + ":" + *value;
    }
  }
  return out;
}

// Decodes one UTF-8 code point at s[i]; returns its byte length (1 for invalid bytes).
size_t CodePointAt(std::string_view s, size_t i, uint32_t* cp) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (i + len > s.size()) {
    len = 1;
  }
  if (len == 1) {
    *cp = b;
    return 1;
  }
  uint32_t v = b & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) {
    v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  *cp = v;
  return len;
}

// Byte length of the longest prefix of at most `units` UTF-16 units; a supplementary character
// straddling the limit is included whole (Spark keeps surrogate pairs together).
size_t PrefixBytes(std::string_view s, int64_t units, int64_t* taken_units) {
  size_t i = 0;
  int64_t u = 0;
  while (i < s.size() && u < units) {
    uint32_t cp;
    size_t len = CodePointAt(s, i, &cp);
    u += cp >= 0x10000 ? 2 : 1;
    i += len;
  }
  *taken_units = u;
  return i;
}

int64_t Utf16Length(std::string_view s) {
  int64_t u = 0;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    i += CodePointAt(s, i, &cp);
    u += cp >= 0x10000 ? 2 : 1;
  }
  return u;
}

// Fills `node` (a leaf with parquet_leaf >= 0) from its Parquet leaf's statistics.
Status TakeLeaf(Node* node, const parquet::ColumnStatistics& leaf) {
  if (leaf.path != node->path || leaf.repeated) {
    return Internal("delta stats: Parquet leaf {} is '{}', expected '{}'", node->parquet_leaf,
                    fmt::join(leaf.path, "."), fmt::join(node->path, "."));
  }
  node->null_count = leaf.null_count;
  node->has_value = false;
  if (!HasMinMax(node->type->id()) || !leaf.min.has_value() || !leaf.max.has_value()) {
    return Status::OK();
  }
  const parquet::StatValue& min = *leaf.min;
  const parquet::StatValue& max = *leaf.max;
  if (node->type->id() == TypeId::kString) {
    const auto* lo = std::get_if<std::string>(&min);
    const auto* hi = std::get_if<std::string>(&max);
    if (lo == nullptr || hi == nullptr) {
      return Internal("delta stats: Parquet leaf '{}' has no byte bounds",
                      fmt::join(node->path, "."));
    }
    node->string_min = *lo;
    node->string_max = *hi;
  } else if (node->type->id() == TypeId::kDecimal) {
    const auto* lo = std::get_if<columnar::Int128>(&min);
    const auto* hi = std::get_if<columnar::Int128>(&max);
    if (lo == nullptr || hi == nullptr) {
      return Internal("delta stats: Parquet leaf '{}' has no decimal bounds",
                      fmt::join(node->path, "."));
    }
    node->decimal_min = *lo;
    node->decimal_max = *hi;
  } else {
    const auto* lo = std::get_if<int64_t>(&min);
    const auto* hi = std::get_if<int64_t>(&max);
    if (lo == nullptr || hi == nullptr) {
      return Internal("delta stats: Parquet leaf '{}' has no integer bounds",
                      fmt::join(node->path, "."));
    }
    node->int_min = *lo;
    node->int_max = *hi;
  }
  node->has_value = true;
  return Status::OK();
}

Status TakeNodes(const std::vector<std::unique_ptr<Node>>& nodes,
                 const std::vector<parquet::ColumnStatistics>& leaves) {
  for (const auto& node : nodes) {
    if (node->is_struct()) {
      FERRY_RETURN_IF_ERROR(TakeNodes(node->children, leaves));
    } else if (node->parquet_leaf >= 0) {
      if (static_cast<size_t>(node->parquet_leaf) >= leaves.size()) {
        return Internal("delta stats: the file has {} Parquet leaves, '{}' is leaf {}",
                        leaves.size(), fmt::join(node->path, "."), node->parquet_leaf);
      }
      FERRY_RETURN_IF_ERROR(TakeLeaf(node.get(), leaves[static_cast<size_t>(node->parquet_leaf)]));
    }
  }
  return Status::OK();
}

}  // namespace

StatsCollector::StatsCollector(const columnar::Schema& data_schema, const StatsOptions& options,
                               bool parquet_leaves)
    : string_prefix_length_(options.string_prefix_length) {
  NodeBuilder builder{options, parquet_leaves};
  roots_ = builder.Build(data_schema.fields(), "", {}, 0);
}

Status StatsCollector::TakeParquetStatistics(const std::vector<parquet::ColumnStatistics>& leaves) {
  return TakeNodes(roots_, leaves);
}

StatsCollector::~StatsCollector() = default;
StatsCollector::StatsCollector(StatsCollector&&) noexcept = default;
StatsCollector& StatsCollector::operator=(StatsCollector&&) noexcept = default;

void StatsCollector::Update(const columnar::RecordBatch& batch) {
  num_records_ += batch.num_rows();
  for (auto& root : roots_) {
    if (root->scan) {
      UpdateNode(root.get(), batch.column(root->field_index), nullptr);
    }
  }
}

std::string StatsCollector::ToJson() const {
  std::string out = "{\"numRecords\":" + std::to_string(num_records_);
  std::string min = Members(roots_, Stat::kMin, string_prefix_length_);
  if (!min.empty()) {
    out += ",\"minValues\":{" + min + "}";
  }
  std::string max = Members(roots_, Stat::kMax, string_prefix_length_);
  if (!max.empty()) {
    out += ",\"maxValues\":{" + max + "}";
  }
  std::string nulls = Members(roots_, Stat::kNullCount, string_prefix_length_);
  if (!nulls.empty()) {
    out += ",\"nullCount\":{" + nulls + "}";
  }
  out += "}";
  return out;
}

std::optional<int64_t> StatsNumRecords(std::string_view stats_json) {
  auto doc = nlohmann::json::parse(stats_json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return std::nullopt;
  }
  auto it = doc.find("numRecords");
  if (it == doc.end() || !it->is_number_integer()) {
    return std::nullopt;
  }
  return it->get<int64_t>();
}

std::string TruncateMinString(std::string_view value, int prefix_length) {
  if (Utf16Length(value) <= prefix_length) {
    return std::string(value);
  }
  int64_t units;
  return std::string(value.substr(0, PrefixBytes(value, prefix_length, &units)));
}

std::optional<std::string> TruncateMaxString(std::string_view value, int prefix_length) {
  if (Utf16Length(value) <= prefix_length) {
    return std::string(value);
  }
  if (prefix_length <= 0) {
    return std::nullopt;
  }
  int64_t units;
  size_t bytes = PrefixBytes(value, prefix_length, &units);
  const int64_t limit = 2LL * prefix_length;
  while (units <= limit) {
    if (bytes >= value.size()) {
      return std::string(value);
    }
    uint32_t cp;
    size_t len = CodePointAt(value, bytes, &cp);
    if (cp == 0x10FFFF) {
      bytes += len;
      units += 2;
    } else if (cp < 0x7F) {
      return std::string(value.substr(0, bytes)) + "\x7F";
    } else {
      return std::string(value.substr(0, bytes)) + "\xF4\x8F\xBF\xBF";
    }
  }
  return std::nullopt;
}

}  // namespace ferry::delta
