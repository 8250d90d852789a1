#include "ferry/pipeline/table_setup.h"

#include <fmt/format.h>

#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/metadata_columns.h"

namespace ferry::pipeline {
namespace {

std::string Join(const std::vector<std::string>& items) {
  return items.empty() ? "(none)" : fmt::format("{}", fmt::join(items, ", "));
}

// The table must hold exactly the expected columns; nullability may be stricter in the table
// only where the data will never be null, so it must be equal or the table's nullable.
Status CheckSchema(const columnar::Schema& table, const columnar::Schema& expected,
                   const std::string& where) {
  if (table.num_fields() != expected.num_fields()) {
    return InvalidArgument(
        "{}: the table has columns ({}) but the configuration declares ({}); declare the "
        "table's schema, or leave `schema` out to use it",
        where, table.ToString(), expected.ToString());
  }
  for (int i = 0; i < table.num_fields(); ++i) {
    const columnar::Field& t = table.field(i);
    const columnar::Field& e = expected.field(i);
    if (t.name != e.name || !t.type->Equals(*e.type)) {
      return InvalidArgument("{}: column {} is `{}` in the table but `{}` in the configuration",
                             where, i + 1, t.ToString(), e.ToString());
    }
    if (!t.nullable && e.nullable) {
      return InvalidArgument(
          "{}: column '{}' is NOT NULL in the table; declare it NOT NULL in the configuration",
          where, t.name);
    }
  }
  return Status::OK();
}

}  // namespace

Result<OpenedTable> OpenOrCreateTable(std::shared_ptr<storage::ObjectStore> store,
                                      const std::string& path, const TableSetupOptions& options) {
  FERRY_ASSIGN_OR_RETURN(auto table, delta::Table::Open(std::move(store), path));
  std::string where = table->Describe();

  columnar::SchemaPtr expected;
  if (!options.schema_ddl.empty()) {
    Result<columnar::Schema> declared =
        columnar::ParseDdlSchema(options.schema_ddl, options.schema_origin);
    if (!declared.ok()) {
      return declared.status();
    }
    FERRY_ASSIGN_OR_RETURN(expected, ResolveSchema(*declared, options.metadata_columns));
    if (!options.transform.columns.empty()) {
      FERRY_ASSIGN_OR_RETURN(auto stage, TransformStage::Create(expected, options.transform));
      expected = stage->table_schema();
    }
  }

  Result<delta::Snapshot> snapshot = table->LoadSnapshot();
  if (snapshot.ok()) {
    if (expected) {
      FERRY_RETURN_IF_ERROR(CheckSchema(*snapshot->schema(), *expected, where));
    }
    if (!options.partition_by.empty() && options.partition_by != snapshot->partition_columns()) {
      return InvalidArgument(
          "{}: the table is partitioned by ({}) but the configuration says partition_by = ({})",
          where, Join(snapshot->partition_columns()), Join(options.partition_by));
    }
    // The metadata columns must be in the table (checked again when the writer is made, but
    // here the message can say which table).
    Result<MetadataWriter> check =
        MetadataWriter::Create(*snapshot->schema(), options.metadata_columns);
    if (!check.ok()) {
      return check.status().WithContext(where);
    }
    return OpenedTable{.table = std::move(table), .snapshot = std::move(*snapshot)};
  }
  if (snapshot.status().code() != StatusCode::kNotFound) {
    return snapshot.status();
  }
  if (!expected) {
    return NotFound("{}: no Delta table there, and no `schema` to create it from", where);
  }
  if (!options.create) {
    return NotFound("{}: no Delta table there (create_table = false)", where);
  }
  delta::TableSpec spec{.schema = expected, .partition_columns = options.partition_by};
  for (const auto& [k, v] : options.properties) {
    spec.configuration[k] = v;
  }
  Result<delta::Snapshot> created = table->Create(spec);
  if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
    // Another process created it first: use theirs if it agrees.
    FERRY_ASSIGN_OR_RETURN(delta::Snapshot theirs, table->LoadSnapshot());
    FERRY_RETURN_IF_ERROR(CheckSchema(*theirs.schema(), *expected, where));
    return OpenedTable{.table = std::move(table), .snapshot = std::move(theirs)};
  }
  if (!created.ok()) {
    return created.status().WithContext(where);
  }
  return OpenedTable{.table = std::move(table), .snapshot = std::move(*created), .created = true};
}

}  // namespace ferry::pipeline
