#include "ferry/pipeline/table_setup.h"

#include <fmt/format.h>

#include <chrono>

#include "ferry/base/log.h"
#include "ferry/base/retry_unavailable.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/metadata_columns.h"

namespace ferry::pipeline {
namespace {

std::string Join(const std::vector<std::string>& items) {
  return items.empty() ? "(none)" : fmt::format("{}", fmt::join(items, ", "));
}

// Every expected column must be in the table with its type or a type that holds it; the table
// may hold more. Nullability may be stricter in the table only where the data will never be
// null, so it must be equal or the table's nullable.
Status CheckSchema(const columnar::Schema& table, const columnar::Schema& expected,
                   const std::string& where, bool allow_missing) {
  for (const columnar::Field& e : expected.fields()) {
    std::optional<size_t> i = columnar::FindFieldIgnoringCase(table.fields(), e.name);
    if (!i) {
      if (allow_missing) {
        continue;
      }
      return InvalidArgument(
          "{}: the configuration declares column `{}` but the table's columns are ({}); add it "
          "to the table with `ferry table add-columns`, or leave `schema` out to use the "
          "table's",
          where, e.ToString(), table.ToString());
    }
    const columnar::Field& t = table.fields()[*i];
    if (t.name != e.name || (!t.type->Equals(*e.type) && !columnar::CanConform(*e.type, *t.type))) {
      return InvalidArgument("{}: column `{}` in the table is `{}` in the configuration", where,
                             t.ToString(), e.ToString());
    }
    if (!t.nullable && e.nullable) {
      return InvalidArgument(
          "{}: column '{}' is NOT NULL in the table; declare it NOT NULL in the configuration",
          where, t.name);
    }
  }
  return Status::OK();
}

// Calls `attempt` until it is not Unavailable, options.unavailable_patience has passed, or
// options.cancelled says stop; each retry is logged with the table's name.
template <typename T>
Result<T> RetryUnavailable(const TableSetupOptions& options, const std::string& where,
                           const std::function<Result<T>()>& attempt) {
  RetryStop retry{.stopping = options.cancelled,
                  .wait = {},
                  .on_retry = [&where](const Status& st, std::chrono::milliseconds backoff) {
                    FERRY_LOG_WARN("{}: the store does not answer: {}; trying again in {} ms",
                                   where, st.message(), backoff.count());
                    return Status::OK();
                  }};
  return RetryWhileUnavailable<T>({.initial_backoff = std::chrono::milliseconds(250),
                                   .max_backoff = std::chrono::seconds(5),
                                   .patience = options.unavailable_patience},
                                  retry, attempt);
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

  Result<delta::Snapshot> snapshot =
      RetryUnavailable<delta::Snapshot>(options, where, [&] { return table->LoadSnapshot(); });
  if (snapshot.ok()) {
    if (expected) {
      FERRY_RETURN_IF_ERROR(
          CheckSchema(*snapshot->schema(), *expected, where, options.allow_missing_columns));
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
  // A retried create may find its own first attempt landed: AlreadyExists, and the schema agrees.
  Result<delta::Snapshot> created =
      RetryUnavailable<delta::Snapshot>(options, where, [&] { return table->Create(spec); });
  if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
    // Another process created it first: use theirs if it agrees.
    FERRY_ASSIGN_OR_RETURN(
        delta::Snapshot theirs,
        RetryUnavailable<delta::Snapshot>(options, where, [&] { return table->LoadSnapshot(); }));
    FERRY_RETURN_IF_ERROR(
        CheckSchema(*theirs.schema(), *expected, where, options.allow_missing_columns));
    return OpenedTable{.table = std::move(table), .snapshot = std::move(theirs)};
  }
  if (!created.ok()) {
    return created.status().WithContext(where);
  }
  return OpenedTable{.table = std::move(table), .snapshot = std::move(*created), .created = true};
}

}  // namespace ferry::pipeline
