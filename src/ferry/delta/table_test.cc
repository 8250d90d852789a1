// Writing tables: create, append through TableWriter + Transaction, read back, conflicts,
// ambiguous store outcomes, checkpoints, incremental updates, time travel. One suite for every
// store (testing/delta_suites.h): in-memory and local disk in delta_test, S3 (radosgw) in
// s3_delta_test.
#include "ferry/delta/table.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "ferry/base/failpoint.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/checkpoint_reader.h"
#include "ferry/delta/last_checkpoint.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/testing/delta_suites.h"
#include "ferry/testing/fault_injecting_store.h"
#include "ferry/testing/forwarding_store.h"
#include "ferry/testing/table_verifier.h"

namespace ferry::testing {

using delta::Action;
using delta::AddFile;
using delta::CommitFileName;
using delta::CommitInfo;
using delta::CommitOptions;
using delta::CommitResult;
using delta::DecodeUriPath;
using delta::Metadata;
using delta::ParseLastCheckpoint;
using delta::Protocol;
using delta::ReadParquetActions;
using delta::SchemaToJson;
using delta::Snapshot;
using delta::StringMap;
using delta::Table;
using delta::TableSpec;
using delta::TableWriter;
using delta::TableWriterOptions;
using delta::Transaction;
using delta::Txn;

namespace {

using columnar::DataType;
using columnar::Field;

columnar::SchemaPtr WideSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), false, {}},
      {"name", DataType::String(), true, {}},
      {"s",
       DataType::Struct({{"a", DataType::Int32(), true, {}}, {"b", DataType::String(), true, {}}}),
       true,
       {}},
      {"tags", DataType::List(DataType::String()), true, {}},
      {"amount", DataType::Decimal(10, 2), true, {}},
      {"ts", DataType::Timestamp(), true, {}},
      {"p_str", DataType::String(), true, {}},
      {"p_int", DataType::Int32(), true, {}},
      {"p_date", DataType::Date(), true, {}},
      {"p_ts", DataType::Timestamp(), true, {}},
  });
}

// Rows `begin`..`end`, cycling through partition values with nulls and characters that need
// escaping in paths ('/', '=', '%', ' ', '#', ':', non-ASCII, the empty string).
columnar::RecordBatch WideBatch(int64_t begin, int64_t end) {
  static const char* kStrings[] = {"plain", "a/b=c%d e#f", "ünï:code", "", "x"};
  auto batch = columnar::RecordBatch::MakeEmpty(WideSchema());
  for (int64_t i = begin; i < end; ++i) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(i);
    if (i % 7 == 0) {
      batch.mutable_column(1)->AppendNull();
    } else {
      batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append("name-" + std::to_string(i));
    }
    auto* s = batch.mutable_column(2)->As<columnar::StructColumn>();
    if (i % 5 == 0) {
      s->AppendNull();
    } else {
      s->mutable_child(0)->As<columnar::Int32Column>()->Append(static_cast<int32_t>(i));
      s->mutable_child(1)->As<columnar::BinaryColumn>()->Append("b" + std::to_string(i % 3));
      s->FinishRow();
    }
    auto* tags = batch.mutable_column(3)->As<columnar::ListColumn>();
    for (int64_t t = 0; t < i % 3; ++t) {
      tags->mutable_child()->As<columnar::BinaryColumn>()->Append("t" + std::to_string(t));
    }
    tags->FinishRow();
    batch.mutable_column(4)->As<columnar::DecimalColumn>()->Append(i * 101 - 5000);
    batch.mutable_column(5)->As<columnar::TimestampColumn>()->Append(1631099471000000 + i * 1001);
    if (i % 6 == 5) {
      batch.mutable_column(6)->AppendNull();
    } else {
      batch.mutable_column(6)->As<columnar::BinaryColumn>()->Append(kStrings[i % 5]);
    }
    if (i % 4 == 3) {
      batch.mutable_column(7)->AppendNull();
    } else {
      batch.mutable_column(7)->As<columnar::Int32Column>()->Append(static_cast<int32_t>(i % 3 - 1));
    }
    batch.mutable_column(8)->As<columnar::DateColumn>()->Append(18878 +
                                                                static_cast<int32_t>(i % 2));
    if (i % 9 == 8) {
      batch.mutable_column(9)->AppendNull();
    } else {
      batch.mutable_column(9)->As<columnar::TimestampColumn>()->Append(1631099471000000 +
                                                                       (i % 2) * 1500000);
    }
  }
  return batch;
}

}  // namespace

void TableTest::SetUp() {
  Result<TestStore> made = GetParam().fresh();
  ASSERT_TRUE(made.ok()) << GetParam().name << ": " << made.status().ToString();
  fixture_ = std::move(*made);
  store_ = fixture_.store;
  auto table = Table::Open(store_, "db/events");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  table_ = std::move(*table);
}

void TableTest::TearDown() {
  failpoint::DisarmAll();
  table_.reset();
  store_.reset();
  fixture_.store.reset();
  if (fixture_.cleanup) {
    fixture_.cleanup();
  }
}

Snapshot TableTest::CreateWide(StringMap configuration) {
  TableSpec spec;
  spec.schema = WideSchema();
  spec.partition_columns = {"p_str", "p_int", "p_date", "p_ts"};
  spec.configuration = std::move(configuration);
  auto snap = table_->Create(spec);
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? *snap : Snapshot();
}

Result<CommitResult> TableTest::Append(const Snapshot& snapshot, const columnar::RecordBatch& batch,
                                       std::map<std::string, int64_t> positions,
                                       CommitOptions options) {
  FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(*table_, snapshot));
  FERRY_RETURN_IF_ERROR(writer->Write(batch));
  FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
  Transaction txn(*table_, snapshot, options);
  txn.AddFiles(std::move(adds));
  for (const auto& [app_id, v] : positions) {
    txn.SetPosition(app_id, v);
  }
  return txn.Commit();
}

std::vector<std::string> TableTest::Sorted(std::vector<std::string> rows) {
  for (std::string& row : rows) {
    size_t pos = row.find("|p_str=|");
    if (pos != std::string::npos) {
      row.replace(pos, 8, "|p_str=null|");
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

namespace {

TEST_P(TableTest, CreateWritesProtocolAndMetadata) {
  Snapshot snap = CreateWide({{"delta.appendOnly", "true"}});
  EXPECT_EQ(snap.version(), 0);
  EXPECT_EQ(snap.protocol(), (Protocol{1, 2, std::nullopt, std::nullopt}));
  EXPECT_EQ(snap.metadata().id.size(), 36u);
  EXPECT_TRUE(snap.metadata().created_time.has_value());
  EXPECT_TRUE(snap.schema()->Equals(*WideSchema()));
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->metadata(), snap.metadata());
  EXPECT_EQ(loaded->metadata().configuration.at("delta.appendOnly"), "true");
  // Spark's schemaString:
  // {"type":"struct","fields":[{"name":"id","type":"long","nullable":false,...
  EXPECT_EQ(loaded->metadata().schema_string.rfind(
                R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":false,)", 0),
            0u);
  TableSpec again;
  again.schema = WideSchema();
  EXPECT_EQ(table_->Create(again).status().code(), StatusCode::kAlreadyExists);
}

TEST_P(TableTest, CreateRefusesBadSpecs) {
  TableSpec spec;
  spec.schema = WideSchema();
  spec.partition_columns = {"nope"};
  EXPECT_EQ(table_->Create(spec).status().code(), StatusCode::kInvalidArgument);
  spec.partition_columns = {"tags"};
  EXPECT_EQ(table_->Create(spec).status().code(), StatusCode::kInvalidArgument);
  spec.partition_columns = {};
  spec.configuration = {{"delta.checkpointInterval", "zero"}};
  EXPECT_EQ(table_->Create(spec).status().code(), StatusCode::kInvalidArgument);
  spec.configuration = {{"delta.constraints.positive", "id > 0"}};
  auto constrained = table_->Create(spec);
  EXPECT_EQ(constrained.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(constrained.status().message().find("positive"), std::string::npos);
  EXPECT_EQ(table_->LoadSnapshot().status().code(), StatusCode::kNotFound);
}

TEST_P(TableTest, TimestampNtzTablesGetTheFeature) {
  TableSpec spec;
  spec.schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"t", DataType::Timestamp(columnar::TimeUnit::kMicros, false), true, {}}});
  auto snap = table_->Create(spec);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->protocol().min_reader_version, 3);
  EXPECT_EQ(snap->protocol().reader_features, std::vector<std::string>{"timestampNtz"});
  // The features writer version 2 implied stay listed (Spark refuses a NOT NULL column on a
  // writer-version-7 table that does not list `invariants`; tests/interop found it).
  EXPECT_EQ(snap->protocol().min_writer_version, 7);
  EXPECT_EQ(snap->protocol().writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "timestampNtz"}));
}

// Round trip: partitioned by string, int, date and timestamp, with nulls and special
// characters; the table reads back with exactly the rows written.
TEST_P(TableTest, RoundTripPartitionedWithNullsAndSpecialCharacters) {
  Snapshot snap = CreateWide();
  auto batch = WideBatch(0, 200);
  auto result = Append(snap, batch, {{"pipe/kafka/t/0", 199}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->version, 1);
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->files(), result->snapshot.files());
  EXPECT_EQ(loaded->position("pipe/kafka/t/0"), 199);
  EXPECT_EQ(loaded->num_records(), 200);
  auto rows = ReadTableRows(*table_, *loaded);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, Sorted(RenderRows(batch)));
  EXPECT_TRUE(VerifyFiles(*table_, *loaded).ok());
  // Paths: Hive-escaped directories, URI-encoded in the log; nulls and "" as the default
  // partition; partition columns are not in the data files.
  bool saw_escaped = false;
  bool saw_null = false;
  for (const auto& [key, add] : loaded->files()) {
    EXPECT_NE(add.path.find("-c000.zstd.parquet"), std::string::npos) << add.path;
    EXPECT_EQ(add.path.find(' '), std::string::npos) << add.path;
    if (add.partition_values.at("p_str") == "a/b=c%d e#f") {
      saw_escaped = true;
      EXPECT_EQ(add.path.rfind("p_str=a%252Fb%253Dc%2525d%20e%2523f/", 0), 0u) << add.path;
    }
    if (!add.partition_values.at("p_str").has_value()) {
      saw_null = true;
      EXPECT_EQ(add.path.rfind("p_str=__HIVE_DEFAULT_PARTITION__/", 0), 0u) << add.path;
    }
    auto ts = add.partition_values.at("p_ts");
    if (ts.has_value()) {
      EXPECT_EQ(ts->back(), 'Z') << *ts;
      EXPECT_NE(add.path.find("p_ts=2021-09-08%2011%253A11%253A1"), std::string::npos) << add.path;
    }
    auto file = store_->OpenForRead(table_->Key(*DecodeUriPath(add.path)));
    ASSERT_TRUE(file.ok()) << add.path;
    auto reader = parquet::FileReader::Open(*file);
    ASSERT_TRUE(reader.ok());
    EXPECT_FALSE((*reader)->schema()->FieldIndex("p_str").has_value());
    EXPECT_TRUE((*reader)->schema()->FieldIndex("name").has_value());
  }
  EXPECT_TRUE(saw_escaped);
  EXPECT_TRUE(saw_null);
}

TEST_P(TableTest, TargetFileSizeRollsFiles) {
  TableSpec spec;
  spec.schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"id", DataType::Int64(), true, {}}, {"s", DataType::String(), true, {}}});
  auto snap = table_->Create(spec);
  ASSERT_TRUE(snap.ok());
  TableWriterOptions options;
  options.target_file_size = 16 << 10;
  options.parquet.row_group_max_rows = 1000;
  auto writer = TableWriter::Create(*table_, *snap, options);
  ASSERT_TRUE(writer.ok());
  std::vector<std::string> expected;
  for (int b = 0; b < 20; ++b) {
    auto batch = columnar::RecordBatch::MakeEmpty(spec.schema);
    for (int i = 0; i < 1000; ++i) {
      batch.mutable_column(0)->As<columnar::Int64Column>()->Append(b * 1000 + i);
      batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(
          "value-" + std::to_string((b * 7919 + i * 104729) % 1000003));
    }
    for (auto& row : RenderRows(batch)) {
      expected.push_back(row);
    }
    ASSERT_TRUE((*writer)->Write(batch).ok());
  }
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok()) << adds.status().ToString();
  EXPECT_GT(adds->size(), 3u);
  Transaction txn(*table_, *snap);
  txn.AddFiles(*adds);
  auto result = txn.Commit();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*ReadTableRows(*table_, result->snapshot), Sorted(expected));
  EXPECT_TRUE(VerifyFiles(*table_, result->snapshot).ok());
}

TEST_P(TableTest, BatchesMustMatchTheSchema) {
  Snapshot snap = CreateWide();
  auto writer = TableWriter::Create(*table_, snap);
  ASSERT_TRUE(writer.ok());
  auto other = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"id", DataType::Int32(), false, {}}});
  auto bad = columnar::RecordBatch::MakeEmpty(other);
  bad.mutable_column(0)->As<columnar::Int32Column>()->Append(1);
  EXPECT_EQ((*writer)->Write(bad).code(), StatusCode::kInvalidArgument);
  // A rejected batch writes nothing and leaves the writer usable.
  auto loose_schema = WideSchema()->fields();
  loose_schema[0].nullable = true;
  auto loose =
      columnar::RecordBatch::MakeEmpty(std::make_shared<const columnar::Schema>(loose_schema));
  loose.mutable_column(0)->AppendNull();
  for (int c = 1; c < loose.num_columns(); ++c) {
    loose.mutable_column(c)->AppendNull();
  }
  Status st = (*writer)->Write(loose);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'id'"), std::string::npos) << st.ToString();
}

TEST_P(TableTest, BlindAppendsRetryAtTheNextVersion) {
  Snapshot base = CreateWide();
  // Two writers from the same snapshot: the second loses version 1 and lands at 2.
  auto first = Append(base, WideBatch(0, 10), {{"app/a", 9}});
  ASSERT_TRUE(first.ok());
  auto second = Append(base, WideBatch(10, 20), {{"app/b", 19}});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->version, 1);
  EXPECT_EQ(second->version, 2);
  EXPECT_EQ(second->attempts, 2);
  // The post-commit snapshot includes the winner's files and positions.
  EXPECT_EQ(second->snapshot.position("app/a"), 9);
  EXPECT_EQ(second->snapshot.position("app/b"), 19);
  auto loaded = table_->LoadSnapshot();
  EXPECT_EQ(loaded->files(), second->snapshot.files());
  EXPECT_EQ(*ReadTableRows(*table_, *loaded), Sorted(RenderRows(WideBatch(0, 20))));
}

// An I/O error while resolving a lost race (the `delta.commit.on_conflict` failpoint, which the
// torture harness arms but cannot make a race hit on purpose): the loser's commit fails, nothing
// enters the log, and a retry from a fresh snapshot lands after the winner.
TEST_P(TableTest, ErrorWhileResolvingAConflictCommitsNothingAndARetryLands) {
  Snapshot base = CreateWide();
  ASSERT_TRUE(Append(base, WideBatch(0, 10), {{"app/a", 9}}).ok());
  ASSERT_TRUE(failpoint::Arm("delta.commit.on_conflict", "error(EIO)@1").ok());
  auto failed = Append(base, WideBatch(10, 20), {{"app/b", 19}});
  EXPECT_EQ(failpoint::HitCount("delta.commit.on_conflict"), 1);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kIOError) << failed.status().ToString();
  auto after = table_->LoadSnapshot();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->version(), 1);
  EXPECT_FALSE(after->position("app/b").has_value());
  auto retried = Append(*after, WideBatch(10, 20), {{"app/b", 19}});
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(retried->version, 2);
  EXPECT_EQ(*ReadTableRows(*table_, retried->snapshot), Sorted(RenderRows(WideBatch(0, 20))));
}

// A store whose every request takes 2-8 ms each way (a random latency before and after the call),
// like a remote object store.
class LatencyStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  using ObjectStore::List;
  Result<std::vector<storage::ObjectInfo>> List(std::string_view prefix,
                                                const storage::ListOptions& options) override {
    Wait();
    auto out = ForwardingStore::List(prefix, options);
    Wait();
    return out;
  }
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override {
    Wait();
    auto out = ForwardingStore::OpenForRead(key);
    Wait();
    return out;
  }
  Status PutIfAbsent(std::string_view key, std::string_view data) override {
    Wait();
    Status out = ForwardingStore::PutIfAbsent(key, data);
    Wait();
    return out;
  }
  Status Put(std::string_view key, std::string_view data) override {
    Wait();
    Status out = ForwardingStore::Put(key, data);
    Wait();
    return out;
  }

 private:
  static void Wait() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(2000, 8000)(rng)));
  }
};

// Issue 41 (docs/RELIABILITY.md, "JetStream elastic mode"): one writer committing
// back to back (a data file, then its commit, like a pipeline with a backlog) took every version
// another writer's commit aimed at, 200 times in a row, because the loser slept, listed the log
// and read the new commits one at a time before each put: longer than the leader's cycle of two
// requests. The loser now reads the versions after the one it lost at once and puts right away.
// ContentionTest runs on the memory and local stores only (delta_suites.h).
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ContentionTest);

TEST_P(ContentionTest, ACommitLandsBesideAWriterCommittingBackToBack) {
  const Snapshot base = CreateWide();
  auto slow = std::make_shared<LatencyStore>(store_);
  auto opened = Table::Open(slow, "db/events");
  ASSERT_TRUE(opened.ok());
  const Table& table = **opened;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> leader_commits{0};
  Status leader_status;
  std::thread leader([&] {
    Snapshot snapshot = base;
    for (int64_t n = 1; !stop.load(); ++n) {
      // Its "data file": a request that needs no condition.
      leader_status = slow->Put(fmt::format("db/events/leader-{}", n), "x");
      if (!leader_status.ok()) {
        return;
      }
      Transaction txn(table, snapshot, CommitOptions{.checkpoint = false});
      txn.SetPosition("leader", n);
      auto committed = txn.Commit();
      if (!committed.ok()) {
        leader_status = committed.status();
        return;
      }
      snapshot = std::move(committed->snapshot);
      leader_commits = n;
    }
  });
  while (leader_commits.load() < 3 && leader_status.ok()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The loser starts from the table as it was before the leader's commits.
  Result<CommitResult> loser = [&]() -> Result<CommitResult> {
    FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(table, base));
    FERRY_RETURN_IF_ERROR(writer->Write(WideBatch(0, 10)));
    FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
    Transaction txn(table, base, CommitOptions{.max_attempts = 40, .checkpoint = false});
    txn.AddFiles(std::move(adds));
    txn.SetPosition("loser", 9);
    return txn.Commit();
  }();
  stop = true;
  leader.join();
  ASSERT_TRUE(leader_status.ok()) << leader_status.ToString();
  ASSERT_TRUE(loser.ok()) << loser.status().ToString();
  EXPECT_GE(loser->attempts, 2);  // it lost at least the version its stale snapshot aimed at
  auto latest = table_->LoadSnapshot();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->position("loser"), 9);
  EXPECT_EQ(latest->position("leader"), leader_commits.load());
  EXPECT_EQ(*ReadTableRows(*table_, *latest), Sorted(RenderRows(WideBatch(0, 10))));
}

TEST_P(TableTest, SameAppIdConflictIsConcurrentTransaction) {
  Snapshot base = CreateWide();
  ASSERT_TRUE(Append(base, WideBatch(0, 10), {{"pipe/kafka/t/0", 9}}).ok());
  auto loser = Append(base, WideBatch(0, 10), {{"pipe/kafka/t/0", 9}});
  EXPECT_EQ(loser.status().code(), StatusCode::kAborted);
  EXPECT_NE(loser.status().message().find("ConcurrentTransaction"), std::string::npos);
  EXPECT_EQ(table_->LoadSnapshot()->version(), 1);
}

TEST_P(TableTest, ExpectedPositionsAreChecked) {
  Snapshot base = CreateWide();
  auto first = Append(base, WideBatch(0, 10), {{"p", 9}});
  ASSERT_TRUE(first.ok());
  // The caller believes the position is still unset: refused without writing anything.
  Transaction stale(*table_, first->snapshot);
  stale.SetPosition("p", 19);
  stale.ExpectPosition("p", std::nullopt);
  auto refused = stale.Commit();
  EXPECT_EQ(refused.status().code(), StatusCode::kAborted);
  Transaction ok(*table_, first->snapshot);
  ok.SetPosition("p", 19);
  ok.ExpectPosition("p", 9);
  auto committed = ok.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->snapshot.position("p"), 19);
}

TEST_P(TableTest, SchemaChangeByAnotherWriterAborts) {
  Snapshot base = CreateWide();
  Transaction alter(*table_, base);
  Metadata changed = base.metadata();
  auto fields = WideSchema()->fields();
  fields.push_back({"extra", DataType::Int32(), true, {}});
  changed.schema_string = *SchemaToJson(columnar::Schema(fields));
  alter.SetMetadata(changed);
  ASSERT_TRUE(alter.Commit().ok());
  auto append = Append(base, WideBatch(0, 5));
  EXPECT_EQ(append.status().code(), StatusCode::kAborted);
  EXPECT_NE(append.status().message().find("MetadataChanged"), std::string::npos);
  // A property-only change is fine.
  auto latest = *table_->LoadSnapshot();
  Transaction props(*table_, latest);
  Metadata with_props = latest.metadata();
  with_props.configuration["delta.checkpointInterval"] = "5";
  props.SetMetadata(with_props);
  ASSERT_TRUE(props.Commit().ok());
  auto batch = columnar::RecordBatch::MakeEmpty(std::make_shared<const columnar::Schema>(fields));
  EXPECT_EQ(Append(latest, batch).status().code(), StatusCode::kOk);
}

// The store applied the put but the reply was lost: the commit reads its own txnId back.
TEST_P(TableTest, AmbiguousPutOutcomeIsResolvedByReadingBack) {
  auto faulty = std::make_shared<FaultInjectingStore>(store_);
  table_ = *Table::Open(faulty, "db/events");
  Snapshot base = CreateWide();
  using Op = FaultInjectingStore::Op;
  using When = FaultInjectingStore::When;
  faulty->InjectError(Op::kPutIfAbsent, When::kAfter, Unavailable("reply lost"));
  auto applied = Append(base, WideBatch(0, 10), {{"p", 9}});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->version, 1);
  faulty->InjectError(Op::kPutIfAbsent, When::kBefore, IOError("EIO"));
  auto retried = Append(applied->snapshot, WideBatch(10, 20), {{"p", 19}});
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(retried->version, 2);
  EXPECT_EQ(retried->attempts, 2);
  // Reading back fails too: the outcome is unknown and the caller must re-read the log.
  faulty->InjectError(Op::kPutIfAbsent, When::kAfter, Unavailable("reply lost"));
  faulty->InjectError(Op::kRead, When::kBefore, Unavailable("store down"));
  auto unknown = Append(retried->snapshot, WideBatch(20, 30), {{"p", 29}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnavailable);
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->version(), 3);
  EXPECT_EQ(loaded->position("p"), 29);
  EXPECT_EQ(*ReadTableRows(*table_, *loaded), Sorted(RenderRows(WideBatch(0, 30))));
}

// A store that refuses the put-if-absent as NotSupported (it ignores the condition) wrote
// nothing: the commit fails at once with that reason, no read-back, no retry.
TEST_P(TableTest, PutRefusedAsNotSupportedFailsTheCommitAtOnce) {
  auto faulty = std::make_shared<FaultInjectingStore>(store_);
  table_ = *Table::Open(faulty, "db/events");
  Snapshot base = CreateWide();
  faulty->InjectError(FaultInjectingStore::Op::kPutIfAbsent, FaultInjectingStore::When::kBefore,
                      NotSupported("the store ignored the condition"));
  auto refused = Append(base, WideBatch(0, 10), {{"p", 9}});
  EXPECT_EQ(refused.status().code(), StatusCode::kNotSupported) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("the store ignored the condition"), std::string::npos);
  EXPECT_NE(refused.status().message().find("commit of version 1"), std::string::npos);
  EXPECT_EQ(table_->LoadSnapshot()->version(), 0);
  auto next = Append(base, WideBatch(0, 10), {{"p", 9}});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->attempts, 1);
}

TEST_P(TableTest, CheckpointsEveryIntervalAndCarryPositions) {
  Snapshot snap = CreateWide({{"delta.checkpointInterval", "3"}});
  std::vector<std::string> expected;
  for (int i = 1; i <= 7; ++i) {
    auto batch = WideBatch(i * 10, i * 10 + 10);
    for (auto& row : RenderRows(batch)) {
      expected.push_back(row);
    }
    auto result = Append(snap, batch, {{"app/" + std::to_string(i % 2), i}});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->checkpoint_version.has_value(), i % 3 == 0) << i;
    EXPECT_TRUE(result->checkpoint_status.ok()) << result->checkpoint_status.ToString();
    snap = std::move(result->snapshot);
  }
  auto hint = ParseLastCheckpoint(*store_->Read("db/events/_delta_log/_last_checkpoint"));
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(hint->version, 6);
  EXPECT_EQ(hint->num_of_add_files, table_->LoadSnapshot(6)->num_files());
  // Drop every commit the checkpoint covers: the table, positions included, must still load.
  for (int v = 0; v <= 6; ++v) {
    ASSERT_TRUE(store_->Delete("db/events/_delta_log/" + CommitFileName(v)).ok());
  }
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->version(), 7);
  EXPECT_EQ(loaded->position("app/0"), 6);
  EXPECT_EQ(loaded->position("app/1"), 7);
  EXPECT_EQ(loaded->metadata(), snap.metadata());
  EXPECT_EQ(loaded->files(), snap.files());
  EXPECT_EQ(*ReadTableRows(*table_, *loaded), Sorted(expected));
  // The checkpoint itself holds the txns (read it directly).
  auto files = store_->List("db/events/_delta_log/00000000000000000006.checkpoint");
  ASSERT_EQ(files->size(), 1u);
  auto actions = ReadParquetActions(*store_->OpenForRead((*files)[0].key));
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  int txns = 0;
  for (const Action& a : *actions) {
    txns += std::holds_alternative<Txn>(a) ? 1 : 0;
    EXPECT_FALSE(std::holds_alternative<CommitInfo>(a));
  }
  EXPECT_EQ(txns, 2);
}

TEST_P(TableTest, FailedCheckpointIsRetriedByTheNextCommit) {
  Snapshot snap = CreateWide({{"delta.checkpointInterval", "2"}});
  auto one = Append(snap, WideBatch(0, 5));
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(failpoint::Arm("delta.checkpoint.before_write", "error(EIO)@1").ok());
  auto two = Append(one->snapshot, WideBatch(5, 10));
  ASSERT_TRUE(two.ok()) << "a checkpoint failure must not fail the commit";
  EXPECT_EQ(two->checkpoint_version, 2);
  EXPECT_FALSE(two->checkpoint_status.ok());
  EXPECT_TRUE(store_->List("db/events/_delta_log/00000000000000000002.checkpoint")->empty());
  auto three = Append(two->snapshot, WideBatch(10, 15));
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->checkpoint_version, 3);
  EXPECT_TRUE(three->checkpoint_status.ok());
  EXPECT_EQ(ParseLastCheckpoint(*store_->Read("db/events/_delta_log/_last_checkpoint"))->version,
            3);
}

TEST_P(TableTest, IncrementalUpdateEqualsAFullLoad) {
  Snapshot base = CreateWide({{"delta.checkpointInterval", "4"}});
  Snapshot mine = base;
  for (int i = 0; i < 9; ++i) {
    auto r = Append(base, WideBatch(i * 3, i * 3 + 3), {{"w" + std::to_string(i % 3), i}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    base = r->snapshot;
  }
  auto updated = table_->Update(mine);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  auto full = table_->LoadSnapshot();
  EXPECT_EQ(updated->version(), full->version());
  EXPECT_EQ(updated->files(), full->files());
  EXPECT_EQ(updated->txns(), full->txns());
  EXPECT_EQ(updated->newest_checkpoint_version(), 8);
  EXPECT_EQ(mine.version(), 0) << "the copy passed in is not modified";
  auto same = table_->Update(*updated);
  EXPECT_EQ(same->version(), updated->version());
}

TEST_P(TableTest, StatsAreWrittenForEveryAdd) {
  Snapshot snap = CreateWide();
  auto result = Append(snap, WideBatch(0, 50));
  ASSERT_TRUE(result.ok());
  for (const auto& [key, add] : result->snapshot.files()) {
    ASSERT_TRUE(add.stats.has_value());
    EXPECT_EQ(add.stats->rfind("{\"numRecords\":", 0), 0u) << *add.stats;
    EXPECT_NE(add.stats->find("\"nullCount\":{\"id\":0"), std::string::npos) << *add.stats;
    EXPECT_EQ(add.stats->find("p_str"), std::string::npos) << "partition columns have no stats";
  }
  EXPECT_EQ(result->snapshot.num_records(), 50);
}

// Time travel far below the checkpoint _last_checkpoint names lists only a window before the
// target; the result equals a full replay, also after log cleanup removed the early commits.
TEST_P(TableTest, TimeTravelFarBelowTheLatestCheckpoint) {
  std::shared_ptr<storage::ObjectStore> store = store_;
  auto table = *Table::Open(store, "tt");
  TableSpec spec;
  spec.schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"id", DataType::Int64(), false, {}}});
  spec.configuration = {{"delta.checkpointInterval", "100"}};
  auto snap = table->Create(spec);
  ASSERT_TRUE(snap.ok());
  for (int64_t v = 1; v <= 1250; ++v) {
    Transaction txn(*table, std::move(*snap));
    AddFile add;
    add.path = "f" + std::to_string(v) + ".parquet";
    add.size = v;
    add.stats = R"({"numRecords":1})";
    txn.Add(add);
    txn.SetPosition("app", v);
    auto result = txn.Commit();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    snap = std::move(result->snapshot);
  }
  auto check = [&](int64_t version) {
    auto s = table->LoadSnapshot(version);
    ASSERT_TRUE(s.ok()) << version << ": " << s.status().ToString();
    EXPECT_EQ(s->version(), version);
    EXPECT_EQ(s->num_files(), version);
    EXPECT_EQ(s->position("app"), version);
    EXPECT_EQ(s->newest_checkpoint_version(), 1200);
  };
  for (int64_t v : {1, 99, 100, 1001, 1150, 1199, 1200, 1249}) {
    check(v);
  }
  for (int64_t v = 0; v < 1000; ++v) {
    ASSERT_TRUE(store->Delete(table->log_dir() + "/" + CommitFileName(v)).ok());
  }
  for (int64_t v : {1000, 1001, 1150, 1249}) {
    check(v);
  }
  EXPECT_FALSE(table->LoadSnapshot(999).ok());
}

}  // namespace
}  // namespace ferry::testing
