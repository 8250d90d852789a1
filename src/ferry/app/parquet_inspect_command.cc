// `ferry parquet inspect FILE [--json]`: the footer of a Parquet file in readable form: schema
// (Parquet and columnar), key-value metadata, row groups and their column chunks with codecs,
// encodings, sizes, offsets and statistics (decoded as the column's type).
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ferry/app/parquet_cat_json.h"
#include "ferry/app/parquet_read_commands.h"
#include "ferry/base/file.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/parquet/value_conversion.h"
#include "ferry/parquet/value_decoder.h"

namespace ferry::app {
namespace {

using parquet::ColumnMetaData;
using parquet::FileMetaData;
using parquet::LeafColumn;
using parquet::SchemaElement;

struct InspectOptions {
  std::string file;
  bool json = false;
};

std::string_view RepetitionName(const SchemaElement& e) {
  if (!e.repetition_type.has_value()) {
    return "required";
  }
  switch (*e.repetition_type) {
    case parquet::FieldRepetitionType::kOptional:
      return "optional";
    case parquet::FieldRepetitionType::kRepeated:
      return "repeated";
    default:
      return "required";
  }
}

std::string_view UnitName(columnar::TimeUnit unit) {
  return unit == columnar::TimeUnit::kMillis   ? "MILLIS"
         : unit == columnar::TimeUnit::kMicros ? "MICROS"
                                               : "NANOS";
}

std::string LogicalTypeText(const parquet::LogicalType& t) {
  using K = parquet::LogicalType::Kind;
  switch (t.kind) {
    case K::kString:
      return "STRING";
    case K::kMap:
      return "MAP";
    case K::kList:
      return "LIST";
    case K::kEnum:
      return "ENUM";
    case K::kDecimal:
      return fmt::format("DECIMAL({},{})", t.precision, t.scale);
    case K::kDate:
      return "DATE";
    case K::kTime:
      return fmt::format("TIME({},{})", UnitName(t.unit), t.is_adjusted_to_utc);
    case K::kTimestamp:
      return fmt::format("TIMESTAMP({},{})", UnitName(t.unit), t.is_adjusted_to_utc);
    case K::kInteger:
      return fmt::format("INT({},{})", t.bit_width, t.is_signed);
    case K::kUnknown:
      return "UNKNOWN";
    case K::kJson:
      return "JSON";
    case K::kBson:
      return "BSON";
    case K::kUuid:
      return "UUID";
    case K::kFloat16:
      return "FLOAT16";
  }
  return fmt::format("LOGICAL({})", static_cast<int>(t.kind));
}

// "optional int32 a (DATE)" or "required group b (LIST)".
std::string ElementText(const SchemaElement& e) {
  std::string type = e.type.has_value() ? std::string(parquet::PhysicalTypeName(*e.type)) : "group";
  if (e.type == parquet::PhysicalType::kFixedLenByteArray) {
    type += fmt::format("({})", e.type_length.value_or(0));
  }
  std::string text = fmt::format("{} {} {}", RepetitionName(e), type, e.name);
  if (e.logical_type.has_value()) {
    text += fmt::format(" ({})", LogicalTypeText(*e.logical_type));
  } else if (e.converted_type.has_value()) {
    text += fmt::format(" ({})", parquet::ConvertedTypeName(*e.converted_type));
  }
  if (e.field_id.has_value()) {
    text += fmt::format(" = {}", *e.field_id);
  }
  return text;
}

// The Parquet schema as an indented tree, one element per line.
void AppendSchemaTree(const std::vector<SchemaElement>& schema, std::string* out) {
  std::vector<int32_t> open;  // children left per open group
  for (size_t i = 0; i < schema.size(); i++) {
    const SchemaElement& e = schema[i];
    std::string indent(2 * open.size() + 2, ' ');
    bool group = !e.type.has_value();
    if (i == 0) {
      fmt::format_to(std::back_inserter(*out), "  message {} {{\n", e.name);
    } else {
      fmt::format_to(std::back_inserter(*out), "{}{}{}\n", indent, ElementText(e),
                     group ? " {" : ";");
    }
    if (!open.empty()) {
      open.back()--;
    }
    if (group) {
      open.push_back(e.num_children.value_or(0));
    }
    while (!open.empty() && open.back() <= 0) {
      open.pop_back();
      fmt::format_to(std::back_inserter(*out), "{}}}\n", std::string(2 * open.size() + 2, ' '));
    }
  }
}

// A statistics value (PLAIN bytes; BYTE_ARRAY without its length) as JSON of the leaf's type.
std::string StatValueJson(const LeafColumn& leaf, std::string_view bytes) {
  auto raw = columnar::MakeColumn(parquet::StorageTypeFor(leaf.physical));
  Status status;
  if (leaf.physical.type == parquet::PhysicalType::kByteArray) {
    raw->As<columnar::BinaryColumn>()->Append(bytes);
  } else {
    status = parquet::DecodePlain(leaf.physical, bytes, 1, raw.get());
  }
  auto value = columnar::MakeColumn(leaf.type);
  if (status.ok()) {
    status = parquet::ConvertValues(leaf.conversion, *raw, value.get());
  }
  std::string out;
  if (!status.ok() || value->length() != 1) {
    AppendJsonString(fmt::format("<undecodable: {} bytes>", bytes.size()), &out);
  } else {
    AppendJsonValue(*value, 0, &out);
  }
  return out;
}

std::string EncodingsText(const ColumnMetaData& m) {
  std::vector<std::string> names;
  for (auto e : m.encodings) {
    names.emplace_back(parquet::EncodingName(e));
  }
  return fmt::format("{}", fmt::join(names, ","));
}

// Statistics as JSON object members (without braces); empty when there are none.
std::string StatsJson(const LeafColumn& leaf, const ColumnMetaData& m) {
  if (!m.statistics.has_value()) {
    return "";
  }
  const parquet::Statistics& s = *m.statistics;
  std::vector<std::string> parts;
  if (s.null_count) {
    parts.push_back(fmt::format("\"null_count\":{}", *s.null_count));
  }
  if (s.distinct_count) {
    parts.push_back(fmt::format("\"distinct_count\":{}", *s.distinct_count));
  }
  if (s.nan_count) {
    parts.push_back(fmt::format("\"nan_count\":{}", *s.nan_count));
  }
  if (s.min_value) {
    parts.push_back(fmt::format("\"min\":{}", StatValueJson(leaf, *s.min_value)));
  }
  if (s.max_value) {
    parts.push_back(fmt::format("\"max\":{}", StatValueJson(leaf, *s.max_value)));
  }
  // The deprecated fields were written with signed comparison whatever the type.
  if (s.min) {
    parts.push_back(fmt::format("\"legacy_min\":{}", StatValueJson(leaf, *s.min)));
  }
  if (s.max) {
    parts.push_back(fmt::format("\"legacy_max\":{}", StatValueJson(leaf, *s.max)));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

std::string OptionalNumber(const std::optional<int64_t>& v) {
  return v.has_value() ? std::to_string(*v) : "null";
}

std::string InspectJson(const parquet::FileReader& reader, uint64_t size) {
  const FileMetaData& md = reader.metadata();
  const auto& leaves = reader.file_schema().leaves;
  std::string out = fmt::format(
      "{{\"file\":{},\"size\":{},\"version\":{},\"created_by\":{},\"num_rows\":{},"
      "\"schema\":{},\"key_value_metadata\":{{",
      Json(reader.name()), size, md.version, md.created_by ? Json(*md.created_by) : "null",
      md.num_rows, Json(reader.schema()->ToString()));
  if (md.key_value_metadata) {
    for (size_t i = 0; i < md.key_value_metadata->size(); i++) {
      const auto& kv = (*md.key_value_metadata)[i];
      fmt::format_to(std::back_inserter(out), "{}{}:{}", i > 0 ? "," : "", Json(kv.key),
                     kv.value ? Json(*kv.value) : "null");
    }
  }
  out += "},\"parquet_schema\":[";
  for (size_t i = 0; i < md.schema.size(); i++) {
    fmt::format_to(std::back_inserter(out), "{}{}", i > 0 ? "," : "",
                   Json(ElementText(md.schema[i])));
  }
  out += "],\"row_groups\":[";
  for (size_t g = 0; g < md.row_groups.size(); g++) {
    const parquet::RowGroup& rg = md.row_groups[g];
    fmt::format_to(std::back_inserter(out),
                   "{}{{\"num_rows\":{},\"total_byte_size\":{},\"total_compressed_size\":{},"
                   "\"columns\":[",
                   g > 0 ? "," : "", rg.num_rows, rg.total_byte_size,
                   OptionalNumber(rg.total_compressed_size));
    for (size_t c = 0; c < rg.columns.size() && c < leaves.size(); c++) {
      const auto& chunk = rg.columns[c];
      fmt::format_to(std::back_inserter(out), "{}{{\"path\":{}", c > 0 ? "," : "",
                     Json(leaves[c].dotted_path));
      if (chunk.meta_data) {
        const ColumnMetaData& m = *chunk.meta_data;
        fmt::format_to(
            std::back_inserter(out),
            ",\"physical_type\":{},\"codec\":{},\"encodings\":{},\"num_values\":{},"
            "\"total_compressed_size\":{},\"total_uncompressed_size\":{},"
            "\"data_page_offset\":{},\"dictionary_page_offset\":{},\"statistics\":{{{}}}",
            Json(parquet::PhysicalTypeName(m.type)), Json(parquet::CompressionCodecName(m.codec)),
            Json(EncodingsText(m)), m.num_values, m.total_compressed_size,
            m.total_uncompressed_size, m.data_page_offset, OptionalNumber(m.dictionary_page_offset),
            StatsJson(leaves[c], m));
      }
      out += "}";
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

std::string InspectText(const parquet::FileReader& reader, uint64_t size) {
  const FileMetaData& md = reader.metadata();
  const auto& leaves = reader.file_schema().leaves;
  std::string out = fmt::format(
      "file: {} ({} bytes)\ncreated by: {}\nformat version: {}\n"
      "rows: {} in {} row groups\n",
      reader.name(), size, md.created_by.value_or("(unknown)"), md.version, md.num_rows,
      md.row_groups.size());
  if (md.key_value_metadata && !md.key_value_metadata->empty()) {
    out += "key-value metadata:\n";
    for (const auto& kv : *md.key_value_metadata) {
      std::string value = kv.value.value_or("(null)");
      if (value.size() > 120) {
        value = value.substr(0, 117) + "...";
      }
      fmt::format_to(std::back_inserter(out), "  {}: {}\n", kv.key, value);
    }
  }
  out += "parquet schema:\n";
  AppendSchemaTree(md.schema, &out);
  fmt::format_to(std::back_inserter(out), "schema: {}\n", reader.schema()->ToString());
  for (size_t g = 0; g < md.row_groups.size(); g++) {
    const parquet::RowGroup& rg = md.row_groups[g];
    fmt::format_to(std::back_inserter(out), "row group {}: {} rows, {} bytes uncompressed\n", g,
                   rg.num_rows, rg.total_byte_size);
    for (size_t c = 0; c < rg.columns.size() && c < leaves.size(); c++) {
      if (!rg.columns[c].meta_data) {
        fmt::format_to(std::back_inserter(out), "  {}: (no metadata)\n", leaves[c].dotted_path);
        continue;
      }
      const ColumnMetaData& m = *rg.columns[c].meta_data;
      fmt::format_to(std::back_inserter(out),
                     "  {}: {} {} [{}] values {}, {} B compressed, {} B uncompressed, "
                     "data page at {}",
                     leaves[c].dotted_path, parquet::PhysicalTypeName(m.type),
                     parquet::CompressionCodecName(m.codec), EncodingsText(m), m.num_values,
                     m.total_compressed_size, m.total_uncompressed_size, m.data_page_offset);
      if (m.dictionary_page_offset) {
        fmt::format_to(std::back_inserter(out), ", dictionary page at {}",
                       *m.dictionary_page_offset);
      }
      std::string stats = StatsJson(leaves[c], m);
      fmt::format_to(std::back_inserter(out), "{}{}\n",
                     stats.empty() ? "" : "\n    stats: ", stats);
    }
  }
  return out;
}

Status Inspect(const InspectOptions& options) {
  FERRY_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::OpenLocal(options.file));
  FERRY_ASSIGN_OR_RETURN(auto file, LocalRandomAccessFile::Open(options.file));
  std::string text =
      options.json ? InspectJson(*reader, file->size()) : InspectText(*reader, file->size());
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return IOError("writing to stdout failed");
  }
  return Status::OK();
}

}  // namespace

void RegisterParquetInspect(CLI::App* parquet, int* exit_code) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* inspect = parquet->add_subcommand(
      "inspect", "Show a Parquet file's schema, row groups, column chunks and statistics");
  inspect->add_option("file", options->file, "Parquet file")->required();
  inspect->add_flag("--json", options->json, "Print one JSON object instead of text");
  inspect->callback([options, exit_code] {
    Status status = Inspect(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "ferry parquet inspect: %s\n", status.ToString().c_str());
      *exit_code = 1;
    }
  });
}

}  // namespace ferry::app
