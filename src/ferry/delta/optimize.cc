#include "ferry/delta/optimize.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <map>
#include <span>

#include <nlohmann/json.hpp>

#include "ferry/base/clock.h"
#include "ferry/delta/clustering_order.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_writer.h"

namespace ferry::delta {
namespace {

// A tiny tokenizer for PartitionPredicate: identifiers/bare words, quoted strings, '='.
class PredicateLexer {
 public:
  explicit PredicateLexer(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  size_t pos() const { return pos_; }

  bool ConsumeChar(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // A bare word: letters, digits, '_', '-', '.', ':', '+' (numbers, dates, identifiers).
  std::optional<std::string> Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == ':' || c == '+') {
        ++pos_;
      } else {
        break;
      }
    }
    if (pos_ == start) {
      return std::nullopt;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  // '...' with '' for a quote; nullopt if there is no quote here; error for an unclosed one.
  Result<std::optional<std::string>> Quoted() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '\'') {
      return std::optional<std::string>();
    }
    std::string out;
    for (++pos_; pos_ < text_.size(); ++pos_) {
      if (text_[pos_] == '\'') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '\'') {
          out += '\'';
          ++pos_;
        } else {
          ++pos_;
          return std::optional<std::string>(std::move(out));
        }
      } else {
        out += text_[pos_];
      }
    }
    return InvalidArgument("unclosed quote in partition predicate");
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

using Bin = std::vector<const AddFile*>;

// Rows per TableWriter::Write of a sorted clustering group: a file closes at the first slice
// that takes it past the target size.
constexpr size_t kClusterSliceRows = 1024;

// Step 2's rule: two files or more, or one with a deletion vector (rewriting it purges the DV).
bool Worth(const Bin& bin) {
  return bin.size() >= 2 || (bin.size() == 1 && bin.front()->deletion_vector.has_value());
}

// Step 1-2: the bins worth rewriting.
std::vector<Bin> PlanBins(const Snapshot& snapshot, const OptimizeOptions& options,
                          ColumnMappingMode mapping) {
  std::map<PartitionValues, std::vector<const AddFile*>> small;
  for (const auto& [key, add] : snapshot.files()) {
    // The predicate names columns as the table shows them; the log keys physical names.
    const bool matches =
        mapping == ColumnMappingMode::kNone
            ? options.where.Matches(add.partition_values)
            : options.where.Matches(LogicalPartitionValues(add.partition_values, *snapshot.schema(),
                                                           snapshot.partition_columns()));
    if (add.size < options.target_size && RelativeFilePath(add).ok() && matches) {
      small[add.partition_values].push_back(&add);
    }
  }
  std::vector<Bin> bins;
  for (auto& [values, files] : small) {
    Bin bin;
    int64_t bytes = 0;
    for (const AddFile* add : files) {
      bin.push_back(add);
      bytes += add->size;
      if (bytes >= options.target_size) {
        if (Worth(bin)) {
          bins.push_back(std::move(bin));
        }
        bin.clear();
        bytes = 0;
      }
    }
    if (Worth(bin)) {
      bins.push_back(std::move(bin));
    }
  }
  return bins;
}

// Step 1 for a clustered table: the groups of files to cluster.
std::vector<Bin> PlanClusterGroups(const Snapshot& snapshot, const OptimizeOptions& options) {
  std::vector<Bin> groups;
  Bin group;
  int64_t bytes = 0;
  for (const auto& [key, add] : snapshot.files()) {
    const bool ours =
        add.clustering_provider.has_value() && *add.clustering_provider == kClusteringProvider;
    if (!RelativeFilePath(add).ok() ||
        (add.clustering_provider.has_value() && !(options.full && ours))) {
      continue;
    }
    if (!group.empty() && bytes + add.size > options.max_cluster_bytes) {
      groups.push_back(std::move(group));
      group.clear();
      bytes = 0;
    }
    group.push_back(&add);
    bytes += add.size;
  }
  if (!group.empty()) {
    groups.push_back(std::move(group));
  }
  return groups;
}

// Step 2-3: the live rows of `add`, with their stable row ids when `tracking` is set, in the
// table's columns (plus the two hidden ones) as TableWriter takes them.
Status ScanForRewrite(const Table& table, const Snapshot& snapshot, const AddFile& add,
                      const std::optional<RowTrackingColumns>& tracking,
                      const columnar::SchemaPtr& batch_schema,
                      const std::function<Status(columnar::RecordBatch&)>& fn) {
  auto rebatch = [&](columnar::RecordBatch& batch) {
    // The scan's schema is the table's fields; TableWriter wants the table schema itself.
    columnar::RecordBatch rows(batch_schema, batch.ReleaseColumns());
    Status st = fn(rows);
    batch = columnar::RecordBatch(batch.schema_ptr(), rows.ReleaseColumns());
    return st;
  };
  if (tracking.has_value()) {
    return ScanLiveFileWithRowTracking(table, snapshot, add, *tracking, kScanBatchRows, rebatch);
  }
  return ScanLiveFile(table, snapshot, add, {}, kScanBatchRows, rebatch);
}

}  // namespace

Result<PartitionPredicate> PartitionPredicate::Parse(std::string_view text) {
  PartitionPredicate predicate;
  predicate.text_ = std::string(text);
  PredicateLexer lexer(text);
  if (lexer.AtEnd()) {
    return predicate;
  }
  while (true) {
    std::optional<std::string> column = lexer.Word();
    if (!column) {
      return InvalidArgument("partition predicate '{}': expected a column name at offset {}", text,
                             lexer.pos());
    }
    if (lexer.ConsumeChar('=')) {
      FERRY_ASSIGN_OR_RETURN(std::optional<std::string> quoted, lexer.Quoted());
      std::optional<std::string> value = quoted ? quoted : lexer.Word();
      if (!value) {
        return InvalidArgument("partition predicate '{}': expected a value at offset {}", text,
                               lexer.pos());
      }
      predicate.terms_.emplace_back(*column, *value);
    } else {
      std::optional<std::string> is = lexer.Word();
      std::optional<std::string> null = lexer.Word();
      if (!is || !null || !EqualsIgnoreCase(*is, "is") || !EqualsIgnoreCase(*null, "null")) {
        return InvalidArgument(
            "partition predicate '{}': expected '=' or IS NULL after '{}' at offset {}", text,
            *column, lexer.pos());
      }
      predicate.terms_.emplace_back(*column, std::nullopt);
    }
    if (lexer.AtEnd()) {
      return predicate;
    }
    std::optional<std::string> conjunction = lexer.Word();
    if (!conjunction || !EqualsIgnoreCase(*conjunction, "and")) {
      return InvalidArgument("partition predicate '{}': expected AND at offset {}", text,
                             lexer.pos());
    }
  }
}

Status PartitionPredicate::CheckColumns(const std::vector<std::string>& partition_columns) const {
  for (const auto& [column, value] : terms_) {
    if (std::find(partition_columns.begin(), partition_columns.end(), column) ==
        partition_columns.end()) {
      return InvalidArgument("'{}' is not a partition column (partition columns: {})", column,
                             fmt::join(partition_columns, ", "));
    }
  }
  return Status::OK();
}

bool PartitionPredicate::Matches(const PartitionValues& values) const {
  for (const auto& [column, value] : terms_) {
    auto it = values.find(column);
    std::optional<std::string> actual;
    if (it != values.end() && it->second && !it->second->empty()) {
      actual = it->second;
    }
    if (actual != value) {
      return false;
    }
  }
  return true;
}

Result<OptimizeResult> Optimize(const Table& table, const OptimizeOptions& options) {
  if (options.target_size <= 0 || options.max_cluster_bytes <= 0 ||
      options.max_cluster_memory <= 0) {
    return InvalidArgument(
        "optimize: the target size and the cluster group size and memory must be positive");
  }
  FERRY_ASSIGN_OR_RETURN(Snapshot snapshot, table.LoadSnapshot());
  FERRY_RETURN_IF_ERROR(options.where.CheckColumns(snapshot.partition_columns()));
  FERRY_ASSIGN_OR_RETURN(ColumnMappingMode mapping,
                         GetColumnMappingMode(snapshot.protocol(), snapshot.metadata()));
  OptimizeResult result;
  // Step 1.
  FERRY_ASSIGN_OR_RETURN(result.clustering_columns,
                         ClusteringColumns(snapshot.protocol(), snapshot.domain_metadata()));
  std::vector<ColumnPath> clustering;
  if (!result.clustering_columns.empty()) {
    auto resolved =
        ResolveClusteringColumns(*snapshot.schema(), result.clustering_columns, mapping);
    if (!resolved.ok()) {
      return resolved.status().WithContext("optimize: {}", table.Describe());
    }
    clustering = std::move(*resolved);
  }
  std::optional<RowTrackingColumns> tracking;
  if (RowTrackingEnabled(snapshot.protocol(), snapshot.metadata())) {
    auto names = MaterializedRowTrackingColumns(snapshot.metadata());
    if (!names.ok()) {
      return names.status().WithContext("optimize: {}", table.Describe());
    }
    tracking = std::move(*names);
    result.row_ids_preserved = true;
  }
  std::vector<Bin> bins = clustering.empty() ? PlanBins(snapshot, options, mapping)
                                             : PlanClusterGroups(snapshot, options);
  result.bins = static_cast<int64_t>(bins.size());
  for (const Bin& bin : bins) {
    for (const AddFile* add : bin) {
      ++result.files_removed;
      result.bytes_removed += add->size;
    }
  }
  if (bins.empty() || options.dry_run) {
    return result;
  }
  Transaction txn(table, snapshot, options.commit);
  const int64_t now = WallMillis();
  TableWriterOptions writer_options;
  writer_options.target_file_size = options.target_size;
  columnar::SchemaPtr batch_schema = snapshot.schema();
  if (tracking.has_value()) {
    writer_options.hidden_columns = {
        columnar::Field{tracking->row_id, columnar::DataType::Int64(), true, {}},
        columnar::Field{tracking->row_commit_version, columnar::DataType::Int64(), true, {}}};
    std::vector<columnar::Field> fields = snapshot.schema()->fields();
    fields.insert(fields.end(), writer_options.hidden_columns.begin(),
                  writer_options.hidden_columns.end());
    batch_schema = std::make_shared<const columnar::Schema>(std::move(fields));
  }
  for (const Bin& bin : bins) {
    // Step 2-3.
    FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(table, snapshot, writer_options));
    std::vector<AddFile> adds;
    std::optional<columnar::RecordBatch> group;  // a clustering group's rows (or part of them)
    int64_t group_bytes = 0;
    // Sorts what the group holds and writes it in that order, in slices, so that the writer
    // cuts files of the target size along the order.
    auto write_group = [&]() -> Status {
      if (!group.has_value()) {
        return Status::OK();
      }
      FERRY_ASSIGN_OR_RETURN(std::vector<int64_t> order, ClusteringOrder(*group, clustering));
      for (size_t begin = 0; begin < order.size(); begin += kClusterSliceRows) {
        const size_t end = std::min(order.size(), begin + kClusterSliceRows);
        FERRY_RETURN_IF_ERROR(writer->Write(
            group->Take(std::span<const int64_t>(order.data() + begin, order.data() + end))));
      }
      group.reset();
      group_bytes = 0;
      ++result.cluster_parts;
      // The part's last file closes here: the next part's rows start a file of their own.
      FERRY_ASSIGN_OR_RETURN(std::vector<AddFile> written, writer->Finish());
      adds.insert(adds.end(), std::make_move_iterator(written.begin()),
                  std::make_move_iterator(written.end()));
      FERRY_ASSIGN_OR_RETURN(writer, TableWriter::Create(table, snapshot, writer_options));
      return Status::OK();
    };
    for (const AddFile* add : bin) {
      FERRY_RETURN_IF_ERROR(ScanForRewrite(
          table, snapshot, *add, tracking, batch_schema, [&](columnar::RecordBatch& rows) {
            result.rows += rows.num_rows();
            if (clustering.empty()) {
              return writer->Write(rows);
            }
            if (!group.has_value()) {
              group = columnar::RecordBatch::MakeEmpty(batch_schema);
            }
            for (int c = 0; c < rows.num_columns(); ++c) {
              group->mutable_column(c)->AppendRange(rows.column(c), 0, rows.num_rows());
            }
            // The decoded rows held, not the files' compressed size, bound the sort's memory.
            group_bytes += rows.ByteSize();
            return group_bytes >= options.max_cluster_memory ? write_group() : Status::OK();
          }));
      txn.Remove(RemoveFile{.path = add->path,
                            .deletion_timestamp = now,
                            .data_change = false,
                            .extended_file_metadata = true,
                            .partition_values = add->partition_values,
                            .size = add->size,
                            .stats = std::nullopt,
                            .tags = add->tags,
                            // The logical file is (path, DV): its DV goes with it.
                            .deletion_vector = add->deletion_vector});
    }
    FERRY_RETURN_IF_ERROR(write_group());
    FERRY_ASSIGN_OR_RETURN(std::vector<AddFile> last, writer->Finish());
    adds.insert(adds.end(), std::make_move_iterator(last.begin()),
                std::make_move_iterator(last.end()));
    for (AddFile& add : adds) {
      add.data_change = false;
      if (!clustering.empty()) {
        add.clustering_provider = kClusteringProvider;
      }
      ++result.files_added;
      result.bytes_added += add.size;
      txn.Add(std::move(add));
    }
  }
  // Step 4.
  if (tracking.has_value()) {
    txn.PreserveRowTracking();
  }
  StringMap parameters = {{"predicate", options.where.text()},
                          {"targetSize", std::to_string(options.target_size)}};
  if (!clustering.empty()) {
    nlohmann::json columns = result.clustering_columns;
    parameters["clusterBy"] = columns.dump();
    parameters["isFull"] = options.full ? "true" : "false";
  }
  txn.SetOperation("OPTIMIZE", std::move(parameters));
  FERRY_ASSIGN_OR_RETURN(CommitResult commit, txn.Commit());
  result.version = commit.version;
  return result;
}

}  // namespace ferry::delta
