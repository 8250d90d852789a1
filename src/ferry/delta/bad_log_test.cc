// Broken logs: a gap in versions, a torn last line, an unknown action, an invalid schemaString,
// checkpoints naming parts or sidecars that are missing. Each must be an error naming the
// version and the file (or, for what the protocol says to ignore, no error), never a crash.
#include <gtest/gtest.h>

#include "ferry/columnar/column.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/forwarding_store.h"

namespace ferry::delta {
namespace {

class BadLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<storage::InMemoryStore>();
    table_ = *Table::Open(store_, "t");
    TableSpec spec;
    spec.schema = std::make_shared<const columnar::Schema>(
        std::vector<columnar::Field>{{"id", columnar::DataType::Int64(), false, {}}});
    spec.configuration = {{"delta.checkpointInterval", "3"}};
    auto snap = table_->Create(spec);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    // Versions 1..4; a checkpoint at 3.
    for (int64_t v = 1; v <= 4; ++v) {
      auto w = TableWriter::Create(*table_, *snap);
      ASSERT_TRUE(w.ok());
      auto batch = columnar::RecordBatch::MakeEmpty(spec.schema);
      batch.mutable_column(0)->As<columnar::Int64Column>()->Append(v);
      ASSERT_TRUE((*w)->Write(batch).ok());
      auto adds = (*w)->Finish();
      ASSERT_TRUE(adds.ok());
      Transaction txn(*table_, *snap);
      txn.AddFiles(std::move(*adds));
      txn.SetPosition("app", v);
      auto result = txn.Commit();
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      snap = std::move(result->snapshot);
    }
    ASSERT_TRUE(store_->Stat(Log(ClassicCheckpointFileName(3))).ok());
  }

  std::string Log(const std::string& name) const { return table_->log_dir() + "/" + name; }
  std::string Read(const std::string& name) const {
    auto file = store_->OpenForRead(Log(name));
    EXPECT_TRUE(file.ok()) << name;
    std::string text;
    EXPECT_TRUE((*file)->ReadAt(0, (*file)->size(), &text).ok());
    return text;
  }
  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(store_->Put(Log(name), text).ok());
  }
  void Remove(const std::string& name) { ASSERT_TRUE(store_->Delete(Log(name)).ok()); }
  // Turns the table into one without checkpoints (so every commit is read).
  void DropCheckpoints() {
    Remove(ClassicCheckpointFileName(3));
    Remove(std::string(kLastCheckpointName));
  }

  // Expects `result` to fail with `code` and a message holding every one of `parts`.
  template <typename T>
  void ExpectError(const Result<T>& result, StatusCode code, std::vector<std::string> parts) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), code) << result.status().ToString();
    for (const std::string& part : parts) {
      EXPECT_NE(result.status().message().find(part), std::string::npos)
          << "'" << part << "' not in: " << result.status().ToString();
    }
  }

  std::shared_ptr<storage::InMemoryStore> store_;
  std::unique_ptr<Table> table_;
};

TEST_F(BadLogTest, GapInVersionsNamesTheMissingVersionAndTheNextFile) {
  DropCheckpoints();
  Remove(CommitFileName(2));
  ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss,
              {"version 2 is missing", CommitFileName(3), CommitFileName(1)});
  // Time travel across the gap fails the same way; before it, the table is readable.
  ExpectError(table_->LoadSnapshot(3), StatusCode::kDataLoss, {"version 2 is missing"});
  auto v1 = table_->LoadSnapshot(1);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->num_files(), 1);
}

TEST_F(BadLogTest, GapBehindACheckpointIsHarmless) {
  // Log cleanup removes commits a checkpoint covers: the table still loads from the checkpoint.
  Remove(CommitFileName(1));
  Remove(CommitFileName(2));
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->version(), 4);
  EXPECT_EQ(snap->num_files(), 4);
  EXPECT_EQ(snap->position("app"), 4);
  // But version 1 cannot be rebuilt any more.
  EXPECT_FALSE(table_->LoadSnapshot(1).ok());
}

TEST_F(BadLogTest, TornLastLineNamesVersionFileAndLine) {
  std::string text = Read(CommitFileName(4));
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  // Cut the last line in half (a writer that crashed mid-write without put-if-absent).
  text.resize(text.size() - 40);
  Write(CommitFileName(4), text);
  ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss,
              {"version 4", CommitFileName(4), "line " + std::to_string(lines)});
  // Incremental update from version 3 reads the same commit and fails the same way.
  auto v3 = table_->LoadSnapshot(3);
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  ExpectError(table_->Update(*v3), StatusCode::kDataLoss, {"version 4", CommitFileName(4)});
}

TEST_F(BadLogTest, UnknownActionsAndFieldsAreIgnored) {
  auto before = table_->LoadSnapshot();
  ASSERT_TRUE(before.ok());
  std::string text = Read(CommitFileName(4));
  text += R"({"someFutureAction":{"x":1,"nested":{"y":[1,2]}}})"
          "\n";
  text.insert(0, R"({"add2":{"path":"not-a-file.parquet"}})"
                 "\n");
  Write(CommitFileName(4), text);
  auto after = table_->LoadSnapshot();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->version(), 4);
  EXPECT_EQ(after->files(), before->files());
  EXPECT_EQ(after->position("app"), 4);
}

TEST_F(BadLogTest, InvalidSchemaStringNamesVersionAndFile) {
  // A metaData action at version 5 whose schemaString is not a schema.
  std::string metadata = Read(CommitFileName(0));
  size_t start = metadata.find("{\"metaData\"");
  ASSERT_NE(start, std::string::npos);
  std::string line = metadata.substr(start, metadata.find('\n', start) - start);
  for (const std::string& bad :
       {std::string(R"({not json)"),
        std::string(R"({\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"float128\",)"
                    R"(\"nullable\":true,\"metadata\":{}}]})"),
        std::string(R"([1,2,3])")}) {
    size_t s = line.find("\"schemaString\":\"");
    ASSERT_NE(s, std::string::npos);
    s += 16;
    size_t e = line.find("\",\"partitionColumns\"", s);
    ASSERT_NE(e, std::string::npos);
    Write(CommitFileName(5), line.substr(0, s) + bad + line.substr(e) + "\n");
    ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss, {"version 5", "schema"});
    ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss, {CommitFileName(5)});
  }
  // Time travel to before the bad metaData still works.
  EXPECT_TRUE(table_->LoadSnapshot(4).ok());
}

TEST_F(BadLogTest, MultiPartCheckpointWithAMissingPart) {
  // Part 1 of 2 of a checkpoint at version 3, part 2 missing; the classic one removed.
  std::string classic = Read(ClassicCheckpointFileName(3));
  std::string part1 = PaddedVersion(3) + ".checkpoint.0000000001.0000000002.parquet";
  Write(part1, classic);
  DropCheckpoints();
  Write(std::string(kLastCheckpointName), R"({"version":3,"size":6,"parts":2})");
  // The commits are all there: the incomplete checkpoint is skipped, not trusted.
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->num_files(), 4);
  // After log cleanup, the checkpoint is the only way in: DataLoss naming the missing part.
  for (int64_t v = 0; v <= 3; ++v) {
    Remove(CommitFileName(v));
  }
  ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss,
              {PaddedVersion(3) + ".checkpoint.0000000002.0000000002.parquet", "part 2 of 2"});
}

TEST_F(BadLogTest, V2CheckpointNamingAMissingSidecar) {
  std::string commit0 = Read(CommitFileName(0));
  // A JSON v2 checkpoint at version 3: checkpointMetadata, protocol (v2Checkpoint), metaData,
  // and a sidecar that does not exist.
  std::string metadata_line;
  {
    size_t start = commit0.find("{\"metaData\"");
    metadata_line = commit0.substr(start, commit0.find('\n', start) - start);
  }
  std::string name = PaddedVersion(3) + ".checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json";
  Write(name, std::string(R"({"checkpointMetadata":{"version":3}})") + "\n" +
                  R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,)"
                  R"("readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}})" +
                  "\n" + metadata_line + "\n" +
                  R"({"sidecar":{"path":"016ae953-37a9-438e-8683-9a9a4a79a395.parquet",)"
                  R"("sizeInBytes":100,"modificationTime":1}})" +
                  "\n");
  DropCheckpoints();
  for (int64_t v = 0; v <= 3; ++v) {
    Remove(CommitFileName(v));
  }
  ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss,
              {"version 3", "016ae953-37a9-438e-8683-9a9a4a79a395.parquet", "sidecar"});
}

TEST_F(BadLogTest, CorruptOrStaleLastCheckpointIsToleratedByListing) {
  for (const std::string& text :
       {std::string("{\"version\":"), std::string(R"({"version":99,"size":1})"),
        std::string(R"({"version":1,"size":1})"), std::string("")}) {
    Write(std::string(kLastCheckpointName), text);
    auto snap = table_->LoadSnapshot();
    ASSERT_TRUE(snap.ok()) << text << ": " << snap.status().ToString();
    EXPECT_EQ(snap->version(), 4);
    EXPECT_EQ(snap->num_files(), 4);
  }
}

TEST_F(BadLogTest, TruncatedCheckpointNamesVersionAndFile) {
  std::string classic = Read(ClassicCheckpointFileName(3));
  Write(ClassicCheckpointFileName(3), classic.substr(0, classic.size() / 2));
  ExpectError(table_->LoadSnapshot(), StatusCode::kDataLoss,
              {"version 3", ClassicCheckpointFileName(3)});
}

// A store whose reads of the keys holding `part` fail with `failure`: a cloud store under load
// answers 503 until the client's retries give up; a file deleted after the listing is NotFound.
class FailingReads final : public testing::ForwardingStore {
 public:
  FailingReads(std::shared_ptr<storage::ObjectStore> base, std::string part, Status failure)
      : ForwardingStore(std::move(base)), part_(std::move(part)), failure_(std::move(failure)) {}
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override {
    if (key.find(part_) != std::string_view::npos) {
      return failure_.WithContext("GET {}", key);
    }
    return ForwardingStore::OpenForRead(key);
  }

 private:
  std::string part_;
  Status failure_;
};

// A checkpoint the store did not serve is not lost: the error keeps the store's code, so a
// pipeline retries instead of stopping (CI saw DataLoss stop a pipeline during Azurite's 503s).
// A checkpoint listed but gone when read is lost data.
TEST_F(BadLogTest, ACheckpointTheStoreDidNotServeIsRetryableAMissingOneIsDataLoss) {
  for (int64_t v = 0; v <= 2; ++v) {
    Remove(CommitFileName(v));  // the checkpoint is the only way in
  }
  auto busy = Table::Open(
      std::make_shared<FailingReads>(store_, ".checkpoint.", Unavailable("HTTP 503 ServerBusy")),
      "t");
  ASSERT_TRUE(busy.ok()) << busy.status().ToString();
  ExpectError((*busy)->LoadSnapshot(), StatusCode::kUnavailable,
              {"checkpoint of version 3", ClassicCheckpointFileName(3), "503"});
  auto gone = Table::Open(
      std::make_shared<FailingReads>(store_, ".checkpoint.", NotFound("no such key")), "t");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  ExpectError((*gone)->LoadSnapshot(), StatusCode::kDataLoss,
              {"checkpoint of version 3", ClassicCheckpointFileName(3), "no such key"});
  // Served again, the same table loads.
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->num_files(), 4);
}

}  // namespace
}  // namespace ferry::delta
