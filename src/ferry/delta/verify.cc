#include "ferry/delta/verify.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "ferry/columnar/column.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table.h"
#include "ferry/delta/value_format.h"

namespace ferry::delta {
namespace {

using columnar::Column;
using columnar::TypeId;

bool IsText(TypeId id) {
  return id == TypeId::kString || id == TypeId::kJson || id == TypeId::kBinary ||
         id == TypeId::kFixedBinary;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// Row `row` of an integer column (or a string column holding a decimal integer); nullopt for
// null or anything else.
std::optional<int64_t> IntAt(const Column& column, int64_t row) {
  if (column.IsNull(row)) {
    return std::nullopt;
  }
  if (IsText(column.type_id())) {
    return ParseInt(column.As<columnar::BinaryColumn>()->Value(row));
  }
  if (!columnar::IsIntegerType(column.type_id())) {
    return std::nullopt;
  }
  return columnar::VisitPrimitive(column.type_id(), [&]<typename C>(C*) -> std::optional<int64_t> {
    if constexpr (std::is_integral_v<typename C::ValueType>) {
      return static_cast<int64_t>(column.As<C>()->Value(row));
    } else {
      return std::nullopt;
    }
  });
}

std::optional<std::string_view> TextAt(const Column& column, int64_t row) {
  if (column.IsNull(row) || !IsText(column.type_id())) {
    return std::nullopt;
  }
  return column.As<columnar::BinaryColumn>()->Value(row);
}

bool KeyColumnType(TypeId id) {
  return columnar::IsIntegerType(id) || IsText(id) || id == TypeId::kBoolean ||
         id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kDecimal;
}

// Appends row `row` of key column `column` (KeyColumnType) to *out: integers in decimal,
// booleans true/false, dates and timestamps as the Delta log spells them, decimals as numbers,
// strings in double quotes with `"` and `\` escaped (so that "(a, b)" is unambiguous). False
// for null.
bool AppendKeyPart(const Column& column, int64_t row, std::string* out) {
  if (column.IsNull(row)) {
    return false;
  }
  const TypeId id = column.type_id();
  if (IsText(id)) {
    out->push_back('"');
    for (char c : column.As<columnar::BinaryColumn>()->Value(row)) {
      if (c == '"' || c == '\\') {
        out->push_back('\\');
      }
      out->push_back(c);
    }
    out->push_back('"');
  } else if (id == TypeId::kBoolean) {
    out->append(column.As<columnar::UInt8Column>()->Value(row) != 0 ? "true" : "false");
  } else if (id == TypeId::kDate) {
    out->append(FormatDate(column.As<columnar::Int32Column>()->Value(row)));
  } else if (id == TypeId::kTimestamp) {
    out->append(FormatTimestampMicros(column.As<columnar::Int64Column>()->Value(row),
                                      TimestampStyle::kIsoMicrosZ));
  } else if (id == TypeId::kDecimal) {
    out->append(
        FormatDecimal(column.As<columnar::DecimalColumn>()->Value(row), column.type()->scale()));
  } else {
    out->append(std::to_string(*IntAt(column, row)));
  }
  return true;
}

// The key of `row` from batch columns [0, count), "(v1, v2, ...)"; nullopt when a part is null.
std::optional<std::string> CompositeKey(const columnar::RecordBatch& batch, int count,
                                        int64_t row) {
  std::string key = "(";
  for (int i = 0; i < count; ++i) {
    if (i > 0) {
      key.append(", ");
    }
    if (!AppendKeyPart(batch.column(i), row, &key)) {
      return std::nullopt;
    }
  }
  key.push_back(')');
  return key;
}

// Counts ids of one key type (int64_t or std::string) and remembers the first duplicates.
template <typename Key>
class IdCounter {
 public:
  explicit IdCounter(int max_listed) : max_listed_(static_cast<size_t>(max_listed)) {}

  void Add(Key key, uint32_t file, VerifyReport* report,
           const std::vector<std::string>& file_paths) {
    auto [it, inserted] = ids_.try_emplace(std::move(key), Entry{.count = 0, .first_file = file});
    ++it->second.count;
    if (inserted) {
      return;
    }
    if (it->second.count == 2) {
      ++report->duplicate_ids;
      if (report->duplicates_listed.size() < max_listed_) {
        listed_[it->first] = report->duplicates_listed.size();
        report->duplicates_listed.push_back(DuplicateId{
            .id = Render(it->first),
            .count = 0,
            .files = {file_paths[it->second.first_file]},
        });
      }
    }
    auto listed = listed_.find(it->first);
    if (listed != listed_.end()) {
      DuplicateId& dup = report->duplicates_listed[listed->second];
      dup.count = it->second.count;
      dup.files.push_back(file_paths[file]);
    }
  }

  int64_t distinct() const { return static_cast<int64_t>(ids_.size()); }

  std::vector<std::string> Rendered() const {
    std::vector<std::string> out;
    out.reserve(ids_.size());
    for (const auto& [key, entry] : ids_) {
      out.push_back(Render(key));
    }
    return out;
  }

  // The integer ids, for the range check.
  std::vector<int64_t> IntegerIds() const {
    std::vector<int64_t> out;
    out.reserve(ids_.size());
    for (const auto& [key, entry] : ids_) {
      if constexpr (std::is_same_v<Key, int64_t>) {
        out.push_back(key);
      } else if (auto value = ParseInt(key)) {
        out.push_back(*value);
      }
    }
    return out;
  }

 private:
  struct Entry {
    int64_t count;
    uint32_t first_file;
  };
  static std::string Render(const Key& key) {
    if constexpr (std::is_same_v<Key, int64_t>) {
      return std::to_string(key);
    } else {
      return key;
    }
  }

  size_t max_listed_;
  std::unordered_map<Key, Entry> ids_;
  std::unordered_map<Key, size_t> listed_;
};

// REQUIRES: first <= last < INT64_MAX, last - first < INT64_MAX (VerifyTable checks).
void CheckRange(std::vector<int64_t> ids, std::pair<int64_t, int64_t> range, int max_listed,
                VerifyReport* report) {
  const auto [first, last] = range;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto limit = static_cast<size_t>(std::max(max_listed, 0));
  int64_t expected = first;  // the smallest range id not yet accounted for
  int64_t in_range = 0;
  auto list_missing_below = [&](int64_t end) {
    for (int64_t id = expected; id < end && report->missing_listed.size() < limit; ++id) {
      report->missing_listed.push_back(id);
    }
  };
  for (int64_t id : ids) {
    if (id < first || id > last) {
      ++report->out_of_range;
      continue;
    }
    ++in_range;
    list_missing_below(id);
    expected = id + 1;
  }
  list_missing_below(last + 1);
  report->missing = last - first + 1 - in_range;
}

struct KafkaKey {
  std::string topic;  // "" when the table has no topic column
  int64_t partition;
  // Spelled out: clang-tidy 14 misreads a defaulted operator<=> (modernize-use-nullptr).
  bool operator<(const KafkaKey& other) const {
    return std::tie(topic, partition) < std::tie(other.topic, other.partition);
  }
};

struct JetStreamFilter {
  std::string app_id;
  std::string filter;
  std::optional<int64_t> max;
};

bool HasColumn(const Snapshot& snapshot, const std::string& name) {
  return !name.empty() && snapshot.schema()->FieldIndex(name).has_value();
}

}  // namespace

int64_t VerifyReport::position_mismatches() const {
  return std::count_if(positions.begin(), positions.end(),
                       [](const PositionCheck& c) { return !c.ok(); });
}

bool VerifyReport::ok() const {
  return duplicates == 0 && null_ids == 0 && missing == 0 && expect_ok.value_or(true) &&
         position_mismatches() == 0 && stats_mismatches.empty();
}

bool SubjectMatches(std::string_view filter, std::string_view subject) {
  while (true) {
    size_t fdot = filter.find('.');
    size_t sdot = subject.find('.');
    std::string_view ftoken = filter.substr(0, fdot);
    std::string_view stoken = subject.substr(0, sdot);
    if (ftoken == ">") {
      return !subject.empty();
    }
    if (subject.empty() || (ftoken != "*" && ftoken != stoken)) {
      return false;
    }
    if (fdot == std::string_view::npos || sdot == std::string_view::npos) {
      return fdot == std::string_view::npos && sdot == std::string_view::npos;
    }
    filter.remove_prefix(fdot + 1);
    subject.remove_prefix(sdot + 1);
  }
}

std::optional<SourceAppId> ParseSourceAppId(std::string_view app_id) {
  std::string_view parts[3];
  for (int i = 2; i >= 0; --i) {
    size_t slash = app_id.rfind('/');
    if (slash == std::string_view::npos) {
      return std::nullopt;
    }
    parts[i] = app_id.substr(slash + 1);
    app_id = app_id.substr(0, slash);
  }
  if ((parts[0] != "kafka" && parts[0] != "jetstream") || parts[1].empty() || parts[2].empty() ||
      app_id.empty()) {
    return std::nullopt;
  }
  return SourceAppId{.pipeline = std::string(app_id),
                     .kind = std::string(parts[0]),
                     .name = std::string(parts[1]),
                     .part = std::string(parts[2])};
}

Result<VerifyReport> VerifyTable(const Table& table, const Snapshot& snapshot,
                                 const VerifyOptions& options) {
  const bool key_mode = !options.key_columns.empty();
  if (key_mode && !options.id_column.empty()) {
    return InvalidArgument("verify takes an id column or key columns, not both");
  }
  const std::vector<std::string> id_columns =
      key_mode ? options.key_columns : std::vector<std::string>{options.id_column};
  std::vector<TypeId> id_types;
  for (const std::string& name : id_columns) {
    std::optional<int> index = snapshot.schema()->FieldIndex(name);
    if (!index) {
      return InvalidArgument("table {} has no column '{}' (columns: {})", table.Describe(), name,
                             snapshot.schema()->ToString());
    }
    const columnar::Field& field = snapshot.schema()->field(*index);
    const TypeId type = field.type->id();
    if (key_mode ? !KeyColumnType(type) : !(columnar::IsIntegerType(type) || IsText(type))) {
      return InvalidArgument("{} column '{}' of table {} is {}: verify needs {}",
                             key_mode ? "key" : "id", name, table.Describe(),
                             field.type->ToString(),
                             key_mode ? "integers, strings, booleans, dates, timestamps or decimals"
                                      : "integers or strings");
    }
    id_types.push_back(type);
  }
  // One integer or string column counts ids as they are; any other key is rendered as text.
  const bool single = id_columns.size() == 1;
  const bool integer_ids = single && columnar::IsIntegerType(id_types[0]);
  const bool text_ids = single && IsText(id_types[0]);
  const int key_count = static_cast<int>(id_columns.size());
  if (options.range) {
    const auto [first, last] = *options.range;
    if (first > last || last == INT64_MAX || (first < 0 && last > INT64_MAX + first - 1)) {
      return InvalidArgument("id range {}..{} is empty or too large", first, last);
    }
  }

  // Which position columns the table has, and the txns to check against them.
  const bool kafka_columns =
      HasColumn(snapshot, options.partition_column) && HasColumn(snapshot, options.offset_column);
  const bool topic_column = kafka_columns && HasColumn(snapshot, options.topic_column);
  const bool jetstream_columns =
      HasColumn(snapshot, options.sequence_column) && HasColumn(snapshot, options.subject_column);
  std::vector<JetStreamFilter> filters;
  bool kafka_txns = false;
  for (const auto& [app_id, txn] : snapshot.txns()) {
    auto parsed = ParseSourceAppId(app_id);
    if (parsed && parsed->kind == "jetstream" && jetstream_columns) {
      filters.push_back({.app_id = app_id, .filter = parsed->part, .max = std::nullopt});
    }
    kafka_txns = kafka_txns || (parsed && parsed->kind == "kafka");
  }
  std::vector<std::string> columns = id_columns;
  const int kafka_index = key_count;
  if (kafka_columns) {
    columns.push_back(options.partition_column);
    columns.push_back(options.offset_column);
    if (topic_column) {
      columns.push_back(options.topic_column);
    }
  }
  const size_t js_index = columns.size();
  if (jetstream_columns && !filters.empty()) {
    columns.push_back(options.sequence_column);
    columns.push_back(options.subject_column);
  }

  VerifyReport report;
  report.version = snapshot.version();
  report.positions_checked = kafka_columns || jetstream_columns;
  IdCounter<int64_t> int_ids(options.max_listed);
  IdCounter<std::string> string_ids(options.max_listed);
  std::map<KafkaKey, int64_t> kafka_max;
  std::vector<std::string> file_paths;
  for (const auto& [key, add] : snapshot.files()) {
    const auto file = static_cast<uint32_t>(file_paths.size());
    file_paths.push_back(add.path);
    ++report.files;
    int64_t file_rows = 0;
    FERRY_RETURN_IF_ERROR(ScanLiveFile(
        table, snapshot, add, columns, kScanBatchRows, [&](columnar::RecordBatch& batch) {
          file_rows += batch.num_rows();
          const Column& ids = batch.column(0);
          for (int64_t row = 0; row < batch.num_rows(); ++row) {
            if (integer_ids || text_ids) {
              if (ids.IsNull(row)) {
                ++report.null_ids;
              } else if (integer_ids) {
                int_ids.Add(*IntAt(ids, row), file, &report, file_paths);
              } else {
                string_ids.Add(std::string(*TextAt(ids, row)), file, &report, file_paths);
              }
              continue;
            }
            std::optional<std::string> row_key;
            if (!single) {
              row_key = CompositeKey(batch, key_count, row);
            } else if (std::string one; AppendKeyPart(ids, row, &one)) {
              row_key = std::move(one);
            }
            if (!row_key) {
              ++report.null_ids;
            } else {
              string_ids.Add(std::move(*row_key), file, &report, file_paths);
            }
          }
          if (kafka_columns) {
            const Column& partitions = batch.column(kafka_index);
            const Column& offsets = batch.column(kafka_index + 1);
            for (int64_t row = 0; row < batch.num_rows(); ++row) {
              std::optional<int64_t> partition = IntAt(partitions, row);
              std::optional<int64_t> offset = IntAt(offsets, row);
              if (!partition || !offset) {
                continue;
              }
              std::optional<std::string_view> topic =
                  topic_column ? TextAt(batch.column(kafka_index + 2), row) : std::string_view();
              KafkaKey k{.topic = std::string(topic.value_or("")), .partition = *partition};
              auto [it, inserted] = kafka_max.try_emplace(std::move(k), *offset);
              if (!inserted) {
                it->second = std::max(it->second, *offset);
              }
            }
          }
          if (js_index < columns.size()) {
            const Column& sequences = batch.column(static_cast<int>(js_index));
            const Column& subjects = batch.column(static_cast<int>(js_index + 1));
            for (int64_t row = 0; row < batch.num_rows(); ++row) {
              std::optional<int64_t> sequence = IntAt(sequences, row);
              std::optional<std::string_view> subject = TextAt(subjects, row);
              if (!sequence || !subject) {
                continue;
              }
              for (JetStreamFilter& f : filters) {
                if ((!f.max || *sequence > *f.max) && SubjectMatches(f.filter, *subject)) {
                  f.max = *sequence;
                }
              }
            }
          }
          return Status::OK();
        }));
    report.rows += file_rows;
    std::optional<int64_t> records =
        add.stats ? StatsNumRecords(*add.stats) : std::optional<int64_t>();
    // numRecords counts the rows a deletion vector deletes too (PROTOCOL.md, "Per-file
    // Statistics"); the scan gave only the live ones.
    const int64_t deleted = add.deletion_vector ? add.deletion_vector->cardinality : 0;
    if (records && *records != file_rows + deleted) {
      report.stats_mismatches.push_back(
          deleted == 0 ? fmt::format("{}: stats.numRecords {} but the file has {} rows", add.path,
                                     *records, file_rows)
                       : fmt::format("{}: stats.numRecords {} but the file has {} live rows and "
                                     "its deletion vector deletes {}",
                                     add.path, *records, file_rows, deleted));
    }
  }
  report.distinct = integer_ids ? int_ids.distinct() : string_ids.distinct();
  if (options.keep_ids) {
    report.ids = integer_ids ? int_ids.Rendered() : string_ids.Rendered();
  }
  report.duplicates = report.rows - report.null_ids - report.distinct;
  if (options.range) {
    CheckRange(integer_ids ? int_ids.IntegerIds() : string_ids.IntegerIds(), *options.range,
               options.max_listed, &report);
  }
  if (options.expect) {
    report.expect_ok = report.rows == *options.expect && report.distinct == *options.expect;
  }

  // Positions.
  std::map<KafkaKey, bool> kafka_used;
  for (const auto& [app_id, txn] : snapshot.txns()) {
    auto parsed = ParseSourceAppId(app_id);
    if (!parsed || parsed->kind != "kafka" || !kafka_columns) {
      continue;
    }
    PositionCheck check{.app_id = app_id,
                        .source = "kafka/" + parsed->name + "/" + parsed->part,
                        .txn_version = txn.version,
                        .data_max = std::nullopt,
                        .at_most = key_mode};
    if (std::optional<int64_t> partition = ParseInt(parsed->part)) {
      KafkaKey k{.topic = topic_column ? parsed->name : "", .partition = *partition};
      auto it = kafka_max.find(k);
      if (it != kafka_max.end()) {
        check.data_max = it->second;
      }
      kafka_used[k] = true;
    }
    report.positions.push_back(std::move(check));
  }
  if (kafka_txns) {
    for (const auto& [k, max] : kafka_max) {
      if (!kafka_used.contains(k)) {
        report.positions.push_back(
            PositionCheck{.app_id = "",
                          .source = "kafka/" + (topic_column ? k.topic : std::string("*")) + "/" +
                                    std::to_string(k.partition),
                          .txn_version = std::nullopt,
                          .data_max = max});
      }
    }
  }
  for (JetStreamFilter& f : filters) {
    auto parsed = ParseSourceAppId(f.app_id);
    report.positions.push_back(
        PositionCheck{.app_id = f.app_id,
                      .source = "jetstream/" + parsed->name + "/" + parsed->part,
                      .txn_version = snapshot.txns().at(f.app_id).version,
                      .data_max = f.max,
                      .at_most = key_mode});
  }
  return report;
}

bool RoutedVerifyReport::ok() const {
  for (const auto& [name, report] : tables) {
    if (!report.ok()) {
      return false;
    }
  }
  return in_several_tables == 0 && missing == 0 && expect_ok.value_or(true);
}

Result<RoutedVerifyReport> VerifyRoutedTables(const std::vector<TableToVerify>& tables,
                                              const VerifyOptions& options) {
  if (options.range) {
    const auto [first, last] = *options.range;
    if (first > last || last == INT64_MAX || (first < 0 && last > INT64_MAX + first - 1)) {
      return InvalidArgument("id range {}..{} is empty or too large", first, last);
    }
  }
  VerifyOptions each = options;
  each.keep_ids = true;
  each.expect.reset();  // of the union, below
  each.range.reset();
  RoutedVerifyReport out;
  // Id -> the tables holding it (indexes into out.tables).
  std::unordered_map<std::string, std::vector<size_t>> where;
  for (const TableToVerify& t : tables) {
    FERRY_ASSIGN_OR_RETURN(VerifyReport report, VerifyTable(*t.table, *t.snapshot, each));
    const size_t index = out.tables.size();
    out.rows += report.rows;
    for (std::string& id : report.ids) {
      where[std::move(id)].push_back(index);
    }
    report.ids.clear();
    out.tables.emplace_back(t.table->Describe(), std::move(report));
  }
  out.distinct = static_cast<int64_t>(where.size());
  std::vector<int64_t> integer_ids;
  for (const auto& [id, holders] : where) {
    if (holders.size() > 1) {
      ++out.in_several_tables;
      if (out.several_listed.size() < static_cast<size_t>(options.max_listed)) {
        std::vector<std::string> names;
        for (size_t h : holders) {
          names.push_back(out.tables[h].first);
        }
        out.several_listed.emplace_back(id, std::move(names));
      }
    }
    if (options.range) {
      if (std::optional<int64_t> value = ParseInt(id)) {
        integer_ids.push_back(*value);
      }
    }
  }
  if (options.range) {
    VerifyReport range;
    CheckRange(std::move(integer_ids), *options.range, options.max_listed, &range);
    out.missing = range.missing;
    out.missing_listed = std::move(range.missing_listed);
  }
  if (options.expect) {
    int64_t duplicates = 0;
    for (const auto& [name, report] : out.tables) {
      duplicates += report.duplicates + report.null_ids;
    }
    out.expect_ok =
        out.rows == *options.expect && out.distinct == *options.expect && duplicates == 0;
  }
  return out;
}

}  // namespace ferry::delta
