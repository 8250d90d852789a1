// Deletion vectors: Z85, the RoaringBitmap64 codec and the DV forms (deletion_vector.h), against
// PROTOCOL.md's examples and the DV files Spark wrote in ../shared/testdata/delta-golden, plus
// round trips of what ferry encodes and damaged input (DataLoss, bounded allocation).
#include "ferry/delta/deletion_vector.h"

#include <gtest/gtest.h>

#include <random>

#include "ferry/base/endian.h"
#include "ferry/delta/table.h"
#include "ferry/storage/local_store.h"
#include "ferry/storage/memory_store.h"

namespace ferry::delta {
namespace {

constexpr uint64_t kNoLimit = ~uint64_t{0};

RoaringBitmap64 Of(const std::vector<uint64_t>& values) {
  RoaringBitmap64 b;
  for (uint64_t v : values) {
    b.Add(v);
  }
  return b;
}

TEST(Z85Test, RoundTripsAndRejectsBadText) {
  // ZeroMQ RFC 32's test vector.
  const std::string bytes("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8);
  EXPECT_EQ(Z85Encode(bytes), "HelloWorld");
  EXPECT_EQ(*Z85Decode("HelloWorld"), bytes);
  EXPECT_FALSE(Z85Decode("Hell").ok());
  EXPECT_FALSE(Z85Decode("Hell~").ok());
  EXPECT_FALSE(Z85Decode("#####").ok());  // above 2^32
}

// PROTOCOL.md's "JSON Example 3 -- Inline" (rows 3, 4, 7, 11, 18, 29) decodes to the magic
// number 1681511376 in big-endian order followed by big-endian counts: not the format the same
// document specifies (1681511377 little-endian + the portable 64-bit bitmap), nor what Spark
// writes (ReadsSparkFilesAndEncodesTheSameBytes). ferry refuses it as DataLoss naming the magic,
// and reads the specified format inline.
TEST(DeletionVectorTest, InlineForm) {
  auto bytes = Z85Decode("wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L");
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(bytes->size(), 40u);
  Status example = DeserializeDeletionVector(*bytes, kNoLimit).status();
  EXPECT_EQ(example.code(), StatusCode::kDataLoss);
  EXPECT_NE(example.ToString().find("magic number"), std::string::npos) << example.ToString();

  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  AddFile add{.path = "f.parquet"};
  const RoaringBitmap64 rows = Of({3, 4, 7, 11, 18, 29});
  add.deletion_vector = InlineDeletionVector(rows);
  EXPECT_EQ(add.deletion_vector->storage_type, "i");
  EXPECT_EQ(add.deletion_vector->cardinality, 6);
  EXPECT_FALSE(add.deletion_vector->offset.has_value());
  EXPECT_EQ(add.deletion_vector->path_or_inline_dv.size(),
            (static_cast<size_t>(add.deletion_vector->size_in_bytes) + 3) / 4 * 5);
  auto loaded = LoadDeletionVector(*table, add, 30);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->ToVector(), rows.ToVector());
  // Row 29 does not exist in a file of 29 rows; a cardinality other than the bitmap's.
  EXPECT_EQ(LoadDeletionVector(*table, add, 29).status().code(), StatusCode::kDataLoss);
  add.deletion_vector->cardinality = 5;
  EXPECT_EQ(LoadDeletionVector(*table, add, 30).status().code(), StatusCode::kDataLoss);
  add.deletion_vector->cardinality = 7;
  EXPECT_EQ(LoadDeletionVector(*table, add, 30).status().code(), StatusCode::kDataLoss);
  // The example's text as a descriptor: DataLoss naming the file.
  add.deletion_vector =
      DeletionVector{.storage_type = "i",
                     .path_or_inline_dv = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
                     .size_in_bytes = 40,
                     .cardinality = 6};
  Status st = LoadDeletionVector(*table, add, 30).status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.ToString().find("f.parquet"), std::string::npos) << st.ToString();
}

// PROTOCOL.md, "JSON Example 1": the random prefix and the UUID of a 'u' DV.
TEST(DeletionVectorTest, ProtocolRelativePathExample) {
  DeletionVector dv{.storage_type = "u", .path_or_inline_dv = "ab^-aqEH.-t@S}K{vb[*k^"};
  EXPECT_EQ(*DeletionVectorRelativePath(dv),
            "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
  auto writer = DeletionVectorFileWriter::Create("d2c639aa-8816-431a-aaf6-d3fe2512ff61", "ab");
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ(writer->Append(Of({1})).path_or_inline_dv, "ab^-aqEH.-t@S}K{vb[*k^");
  EXPECT_FALSE(DeletionVectorFileWriter::Create("not-a-uuid").ok());
}

TEST(RoaringBitmapTest, RoundTripsEveryContainerForm) {
  std::mt19937_64 rng(42);
  std::vector<RoaringBitmap64> cases;
  cases.emplace_back();                              // empty
  cases.push_back(Of({0}));                          // one array value
  cases.push_back(Of({5, 65535, 65536, 1u << 20}));  // several containers
  RoaringBitmap64 dense;                             // a bitmap container
  for (int i = 0; i < 30000; ++i) {
    dense.Add(rng() % 65536);
  }
  cases.push_back(dense);
  RoaringBitmap64 runs;  // run containers, and 4+ containers (offsets with runs)
  runs.AddRange(100, 70000);
  runs.AddRange(200000, 200010);
  runs.AddRange(300000, 300001);
  runs.AddRange(400000, 410000);
  cases.push_back(runs);
  RoaringBitmap64 buckets;  // values above 2^32: several buckets
  buckets.Add(7);
  buckets.Add((uint64_t{1} << 32) + 3);
  buckets.Add((uint64_t{5} << 32) + 65537);
  buckets.AddRange((uint64_t{0x7FFFFFFF} << 32), (uint64_t{0x7FFFFFFF} << 32) + 5000);
  cases.push_back(buckets);
  for (const RoaringBitmap64& b : cases) {
    auto back = RoaringBitmap64::Deserialize(b.Serialize(), b.Cardinality());
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->ToVector(), b.ToVector());
    EXPECT_EQ(back->Cardinality(), b.Cardinality());
    if (!b.Empty()) {
      EXPECT_EQ(back->Max(), b.ToVector().back());
      EXPECT_TRUE(back->Contains(b.ToVector().front()));
    }
    // One value over the caller's bound is refused.
    if (b.Cardinality() > 0) {
      EXPECT_EQ(RoaringBitmap64::Deserialize(b.Serialize(), b.Cardinality() - 1).status().code(),
                StatusCode::kDataLoss);
    }
  }
  EXPECT_LT(runs.Serialize().size(), 100u);  // runs, not 8 KiB bitmaps
}

TEST(RoaringBitmapTest, DamagedInputIsDataLossWithoutHugeAllocations) {
  const std::string good = Of({1, 2, 3, 70000}).Serialize();
  // Truncated anywhere.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_EQ(RoaringBitmap64::Deserialize(good.substr(0, n), kNoLimit).status().code(),
              StatusCode::kDataLoss)
        << n;
  }
  EXPECT_FALSE(RoaringBitmap64::Deserialize(good + "x", kNoLimit).ok());  // trailing bytes
  // Absurd counts are refused from the header, before any allocation.
  std::string huge_buckets = good;
  StoreLE<uint64_t>(huge_buckets.data(), uint64_t{1} << 60);
  EXPECT_EQ(RoaringBitmap64::Deserialize(huge_buckets, kNoLimit).status().code(),
            StatusCode::kDataLoss);
  std::string huge_containers = good;
  StoreLE<uint32_t>(huge_containers.data() + 16, 0xFFFFFFF0u);  // the container count
  EXPECT_EQ(RoaringBitmap64::Deserialize(huge_containers, kNoLimit).status().code(),
            StatusCode::kDataLoss);
  std::string negative_key = good;
  StoreLE<uint32_t>(negative_key.data() + 8, 0x80000000u);
  EXPECT_EQ(RoaringBitmap64::Deserialize(negative_key, kNoLimit).status().code(),
            StatusCode::kDataLoss);
  std::string bad_cookie = good;
  StoreLE<uint32_t>(bad_cookie.data() + 12, 999);
  EXPECT_EQ(RoaringBitmap64::Deserialize(bad_cookie, kNoLimit).status().code(),
            StatusCode::kDataLoss);
  // Magic number.
  EXPECT_EQ(DeserializeDeletionVector(good, kNoLimit).status().code(), StatusCode::kDataLoss);
}

// A DV file with three DVs written by ferry, read back through a store, then damaged.
TEST(DeletionVectorTest, FileRoundTripAndDamage) {
  auto store = std::make_shared<storage::InMemoryStore>();
  auto table = *Table::Open(store, "t");
  auto writer = DeletionVectorFileWriter::Create("0f8fad5b-d9cb-469f-a165-70867728950e");
  ASSERT_TRUE(writer.ok());
  RoaringBitmap64 big;
  big.AddRange(0, 50000);
  const std::vector<RoaringBitmap64> dvs = {Of({0, 7, 14}), big, Of({99999})};
  std::vector<DeletionVector> descriptors;
  for (const RoaringBitmap64& b : dvs) {
    descriptors.push_back(writer->Append(b));
  }
  EXPECT_EQ(writer->relative_path(), "deletion_vector_0f8fad5b-d9cb-469f-a165-70867728950e.bin");
  EXPECT_EQ(*DeletionVectorRelativePath(descriptors[0]), writer->relative_path());
  EXPECT_EQ(descriptors[0].offset, 1);
  ASSERT_TRUE(store->Put(table->Key(writer->relative_path()), writer->bytes()).ok());
  for (size_t i = 0; i < dvs.size(); ++i) {
    AddFile add{.path = "f.parquet"};
    add.deletion_vector = descriptors[i];
    auto rows = LoadDeletionVector(*table, add, 100000);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows->ToVector(), dvs[i].ToVector());
    // The inline form of the same rows.
    add.deletion_vector = InlineDeletionVector(dvs[i]);
    rows = LoadDeletionVector(*table, add, 100000);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows->ToVector(), dvs[i].ToVector());
  }
  // A flipped bit inside the first DV: checksum mismatch, naming the table file and the DV file.
  std::string damaged = writer->bytes();
  damaged[10] = static_cast<char>(damaged[10] ^ 1);
  ASSERT_TRUE(store->Put(table->Key(writer->relative_path()), damaged).ok());
  AddFile add{.path = "f.parquet"};
  add.deletion_vector = descriptors[0];
  Status st = LoadDeletionVector(*table, add, 100000).status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.ToString().find("checksum"), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find("f.parquet"), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find(writer->relative_path()), std::string::npos) << st.ToString();
  // A size the file does not hold; an offset past the end; a wrong version byte; no file.
  ASSERT_TRUE(store->Put(table->Key(writer->relative_path()), writer->bytes()).ok());
  add.deletion_vector->size_in_bytes += 1;
  EXPECT_EQ(LoadDeletionVector(*table, add, 100000).status().code(), StatusCode::kDataLoss);
  add.deletion_vector = descriptors[2];
  add.deletion_vector->offset = 1 << 20;
  EXPECT_EQ(LoadDeletionVector(*table, add, 100000).status().code(), StatusCode::kDataLoss);
  damaged = writer->bytes();
  damaged[0] = 2;
  ASSERT_TRUE(store->Put(table->Key(writer->relative_path()), damaged).ok());
  add.deletion_vector = descriptors[0];
  EXPECT_EQ(LoadDeletionVector(*table, add, 100000).status().code(), StatusCode::kDataLoss);
  ASSERT_TRUE(store->Delete(table->Key(writer->relative_path())).ok());
  EXPECT_EQ(LoadDeletionVector(*table, add, 100000).status().code(), StatusCode::kDataLoss);
}

// The DV files Spark wrote for log-replay-dv-key-cases: DELETEs of ids 0, then 7, then 14.
TEST(DeletionVectorTest, ReadsSparkFilesAndEncodesTheSameBytes) {
  auto store = storage::LocalStore::Create(std::string(FERRY_TESTDATA_DIR) + "/delta-golden");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = *Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)),
                            "log-replay-dv-key-cases");
  auto snapshot = table->LoadSnapshot();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_EQ(snapshot->files().size(), 1u);
  const AddFile& add = snapshot->files().begin()->second;
  auto rows = LoadDeletionVector(*table, add, 50);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->ToVector(), (std::vector<uint64_t>{0, 7, 14}));
  // ferry's encoding of the same rows is byte for byte Spark's.
  auto relative = DeletionVectorRelativePath(*add.deletion_vector);
  ASSERT_TRUE(relative.ok());
  auto spark = table->store().Read(table->Key(*relative));
  ASSERT_TRUE(spark.ok());
  auto writer = DeletionVectorFileWriter::Create(
      relative->substr(std::string("deletion_vector_").size(), 36));
  ASSERT_TRUE(writer.ok());
  DeletionVector ours = writer->Append(*rows);
  EXPECT_EQ(writer->bytes(), *spark);
  EXPECT_EQ(ours, *add.deletion_vector);
}

}  // namespace
}  // namespace ferry::delta
