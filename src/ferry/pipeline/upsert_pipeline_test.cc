// Upsert pipelines end to end over a fake source (docs/cdc.md): what upsert_test.cc checks of
// UpsertCommit alone, through Pipeline with its transform stage and tombstones. A partition
// column derived from the key ([[pipeline.columns]] bucket = id % 3): every change, a tombstone
// too, lands in the key's partition, and the batch replaces the key's row there.
#include <gtest/gtest.h>

#include "ferry/testing/schema_evolution_fixture.h"

namespace ferry::pipeline::evolution_test {
namespace {

using UpsertPipelineTest = SchemaEvolutionTest;

TEST_F(UpsertPipelineTest, APartitionDerivedFromTheKeyHoldsEachKeyOnce) {
  Messages m;
  m.payloads[0] = {
      R"({"id": 1, "v": "a"})",  // batch 1: offsets 0-3
      R"({"id": 2, "v": "b"})",
      R"({"id": 3, "v": "c"})",
      R"({"id": 4, "v": "d"})",
      R"({"id": 1, "v": "A"})",  // batch 2
      "",                        // tombstone of 4
      R"({"id": 5, "v": "e"})",
      R"({"id": 2, "v": "B"})",
      R"({"id": 5, "v": "E"})",  // batch 3, after a restart
      "",                        // tombstone of 3
  };
  m.keys[{0, 5}] = R"({"id": 4})";
  m.keys[{0, 9}] = R"({"id": 3})";
  for (bool dv : {false, true}) {
    SCOPED_TRACE(dv ? "deletion vectors" : "copy-on-write");
    store_ = std::make_shared<storage::InMemoryStore>();
    Setup setup{.ddl = "id BIGINT NOT NULL, v STRING",
                .mode = SchemaEvolution::kNone,
                .transform = {.columns = {{.name = "bucket", .expr = "id % 3"}}},
                .partition_by = {"bucket"},
                .max_rows = 4,
                .id = dv ? "dv" : "cow",
                .upsert = UpsertSpec{.key = {"id"}}};
    if (dv) {
      setup.properties = {{"delta.enableDeletionVectors", "true"}};
    }
    // Two runs: the second starts from the persisted (pruned) key index.
    std::vector<std::string> first(m.payloads[0].begin(), m.payloads[0].begin() + 8);
    Messages head = m;
    head.payloads[0] = first;
    Status st = RunOnce(&head, setup);
    ASSERT_TRUE(st.ok()) << st.ToString();
    st = RunOnce(&m, setup);
    ASSERT_TRUE(st.ok()) << st.ToString();
    delta::Snapshot snap = Latest();
    EXPECT_EQ(snap.partition_columns(), std::vector<std::string>{"bucket"});
    EXPECT_EQ(snap.position(fmt::format("{}/kafka/events/0", setup.id)), 9);
    EXPECT_EQ(LiveRows(), (std::vector<std::string>{
                              "id=1|v=A|_offset=4|bucket=1",
                              "id=2|v=B|_offset=7|bucket=2",
                              "id=5|v=E|_offset=8|bucket=2",
                          }));
  }
}

}  // namespace
}  // namespace ferry::pipeline::evolution_test
