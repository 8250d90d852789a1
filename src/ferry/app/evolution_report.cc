#include "ferry/app/evolution_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/type_widening.h"

namespace ferry::app {
namespace {

using columnar::DataType;
using columnar::TypeId;

// The primitive columns of `type` at `path` that a value may widen, by what they widen to.
void Widenable(const DataType& type, const std::string& path,
               std::map<std::string, std::vector<std::string>>* out) {
  switch (type.id()) {
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
      (*out)["a wider integer, up to BIGINT"].push_back(
          fmt::format("{} {}", path, type.ToString()));
      return;
    case TypeId::kFloat32:
      (*out)["DOUBLE"].push_back(path);
      return;
    case TypeId::kDecimal:
      if (type.precision() < 38) {
        (*out)["a DECIMAL with more digits (up to 38)"].push_back(
            fmt::format("{} {}", path, type.ToString()));
      }
      return;
    case TypeId::kDate:
      (*out)["TIMESTAMP_NTZ (a value with a time of day)"].push_back(path);
      return;
    case TypeId::kStruct:
      for (const columnar::Field& f : type.fields()) {
        Widenable(*f.type, path + "." + f.name, out);
      }
      return;
    case TypeId::kList:
      Widenable(*type.element().type, path + ".element", out);
      return;
    case TypeId::kMap:
      Widenable(*type.value().type, path + ".value", out);
      return;
    default:
      return;
  }
}

}  // namespace

std::string ExplainSchemaEvolution(const config::PipelineConfig& c, const delta::Snapshot& table) {
  std::string out = fmt::format(
      "pipeline {}: table {} (version {}, {} fields), schema_evolution = \"{}\"\n", c.id, c.table,
      table.version(), delta::CountFields(*table.schema()), c.schema_evolution);
  std::string dropped = c.decode.unknown_fields_column.empty()
                            ? std::string("is dropped")
                            : fmt::format("is kept in column '{}'", c.decode.unknown_fields_column);
  if (c.schema_evolution == "none") {
    out += fmt::format(
        "  the table's schema does not change: a message field the table lacks {}; a value that "
        "does not fit its column is a bad record (on_bad_record = \"{}\"); columns added by hand "
        "(`ferry table add-columns`) are filled from the next batch on\n",
        dropped, c.on_bad_record);
    return out;
  }
  int64_t fields = delta::CountFields(*table.schema());
  out += fmt::format(
      "  new fields: a message field the table lacks (at any depth) becomes a nullable column at "
      "the end of its struct, typed from its first non-null value (integer BIGINT, other number "
      "DOUBLE, true/false BOOLEAN, string STRING, object STRUCT, array ARRAY); at most {} per "
      "batch and {} fields in all (the table holds {}: {} more)\n",
      c.max_new_columns_per_batch, c.max_columns, fields,
      std::max<int64_t>(0, c.max_columns - fields));
  std::vector<std::string> reserved;
  for (const auto& [kind, column] : c.metadata_columns) {
    reserved.push_back(column);
  }
  for (const config::DerivedColumn& d : c.columns) {
    reserved.push_back(d.name);
  }
  if (!reserved.empty()) {
    out += fmt::format("  never added from messages: the pipeline's own columns ({})\n",
                       fmt::join(reserved, ", "));
  }
  const auto& config = table.metadata().configuration;
  auto enabled = config.find(delta::kEnableTypeWideningProperty);
  if (c.schema_evolution == "add_columns") {
    out += fmt::format(
        "  widening: off; a value too wide for its column is a bad record (on_bad_record = "
        "\"{}\")\n",
        c.on_bad_record);
  } else if (enabled != config.end() && enabled->second != "true") {
    out += fmt::format(
        "  widening: the table sets {} = {}, so none; a value too wide for its column is a bad "
        "record (on_bad_record = \"{}\")\n",
        delta::kEnableTypeWideningProperty, enabled->second, c.on_bad_record);
  } else {
    std::map<std::string, std::vector<std::string>> widenable;
    const auto& partition = table.partition_columns();
    std::vector<std::string> fixed;
    for (const columnar::Field& f : table.schema()->fields()) {
      if (std::find(partition.begin(), partition.end(), f.name) != partition.end()) {
        fixed.push_back(f.name);
        continue;
      }
      Widenable(*f.type, f.name, &widenable);
    }
    if (widenable.empty()) {
      out += "  widening: no column of the table has a type that widens\n";
    }
    for (const auto& [to, columns] : widenable) {
      out += fmt::format("  widening to {}: {}\n", to, fmt::join(columns, ", "));
    }
    if (!fixed.empty()) {
      out += fmt::format("  never widened: partition columns ({})\n", fmt::join(fixed, ", "));
    }
    if (delta::SupportsTypeWidening(table.protocol())) {
      out += "  the table supports type widening already (protocol unchanged)\n";
    } else {
      const delta::Protocol& p = table.protocol();
      delta::Protocol next =
          delta::WithFeatures(p, {delta::kTypeWideningFeature}, {delta::kTypeWideningFeature});
      out += fmt::format(
          "  the first widening adds the table feature typeWidening and sets {} = true: the "
          "protocol goes from reader {} / writer {} to reader {} / writer {} (readers without type "
          "widening, such as Delta before 3.2, can then no longer read the table)\n",
          delta::kEnableTypeWideningProperty, p.min_reader_version, p.min_writer_version,
          next.min_reader_version, next.min_writer_version);
    }
  }
  if (!c.columns.empty() || !c.where.empty() || c.dedup) {
    out +=
        "  derived columns, `where` and the dedup key are compiled again at every change; one "
        "that no longer type-checks stops the pipeline before anything is written\n";
  }
  out += fmt::format(
      "  a value that no wider type holds (a string where a STRUCT is, a narrowing) is a bad "
      "record (on_bad_record = \"{}\")\n",
      c.on_bad_record);
  return out;
}

}  // namespace ferry::app
