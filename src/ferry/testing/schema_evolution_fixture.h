// SchemaEvolutionTest: a pipeline over a fake source into an in-memory table with schema
// evolution, decoding JSON or framed Avro or Protobuf, appending or upserting; shared by
// schema_evolution_test.cc and schema_evolution_registry_test.cc (the Avro and Protobuf cases).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "ferry/delta/file_scan.h"
#include "ferry/delta/schema_history.h"
#include "ferry/delta/transaction.h"
#include "ferry/delta/type_widening.h"
#include "ferry/pipeline/pipeline.h"
#include "ferry/pipeline/schema_evolver.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fake_source.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/transform/avro_decoder.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/json_decoder.h"
#include "ferry/transform/protobuf_decoder.h"

namespace ferry::pipeline::evolution_test {

using delta::SchemaEvolution;
using testing::FakeSource;
using testing::SharedSource;

// The messages of one source partition set; every source made replays them all.
struct Messages {
  std::string prefix = "kafka/events";
  int partitions = 1;
  std::vector<std::vector<std::string>> payloads = std::vector<std::vector<std::string>>(1);
  // (partition, index in payloads) -> the message's key (none: no key).
  std::map<std::pair<int, size_t>, std::string> keys;

  SourceFactory Factory() {
    return [this]() -> Result<std::unique_ptr<source::Source>> {
      auto s = std::make_shared<FakeSource>(
          FakeSource::Options{.prefix = prefix, .partitions = partitions});
      for (int p = 0; p < partitions; ++p) {
        const std::vector<std::string>& partition = payloads[static_cast<size_t>(p)];
        for (size_t i = 0; i < partition.size(); ++i) {
          auto key = keys.find({p, i});
          s->Produce(p, partition[i], key != keys.end() ? key->second : "");
        }
      }
      return std::unique_ptr<source::Source>(std::make_unique<SharedSource>(std::move(s)));
    };
  }
};

class SchemaEvolutionTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::ObjectStore> store_ = std::make_shared<storage::InMemoryStore>();
  metrics::Registry registry_;
  std::map<std::string, std::string> metadata_ = {{"offset", "_offset"}};

  struct Setup {
    std::string ddl = "id BIGINT NOT NULL";
    SchemaEvolution mode = SchemaEvolution::kAddColumns;
    OnBadRecord on_bad_record = OnBadRecord::kFail;
    TransformSpec transform;
    std::vector<std::string> partition_by;
    std::map<std::string, std::string> properties;  // table_properties of a new table
    delta::SchemaEvolutionLimits limits;
    int64_t max_rows = 1000;
    int max_in_flight = 1;
    std::string id = "events";
    std::shared_ptr<storage::ObjectStore> store;  // default store_
    std::optional<DedupSpec> dedup;
    // Framed Avro or Protobuf messages instead of JSON, their writer schemas by id.
    std::shared_ptr<transform::WriterSchemas> avro;
    std::shared_ptr<transform::ProtoSchemas> protobuf;
    std::function<void(SealedBatch*)> seal_hook;  // PipelineOptions::seal_hook
    std::optional<UpsertSpec> upsert;             // PipelineOptions::upsert
  };

  Result<std::unique_ptr<Pipeline>> Make(Messages* messages, const Setup& setup) {
    auto store = setup.store ? setup.store : store_;
    FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                           OpenOrCreateTable(store, "events",
                                             {.schema_ddl = setup.ddl,
                                              .partition_by = setup.partition_by,
                                              .properties = setup.properties,
                                              .metadata_columns = metadata_,
                                              .transform = setup.transform}));
    std::set<std::string> metadata_names;
    for (const auto& [kind, column] : metadata_) {
      metadata_names.insert(column);
    }
    bool observe = setup.mode != SchemaEvolution::kNone;
    bool widen = setup.mode == SchemaEvolution::kAddColumnsAndWiden;
    auto factory =
        [metadata_names, observe, widen, avro = setup.avro, protobuf = setup.protobuf](
            const columnar::SchemaPtr& input) -> Result<std::unique_ptr<transform::Decoder>> {
      std::vector<std::string> columns;
      for (const columnar::Field& f : input->fields()) {
        if (metadata_names.count(f.name) == 0) {
          columns.push_back(f.name);
        }
      }
      if (avro != nullptr) {
        FERRY_ASSIGN_OR_RETURN(
            auto d, transform::AvroDecoder::Create(
                        input, {.schemas = avro, .columns = columns, .observe = observe}));
        return std::unique_ptr<transform::Decoder>(std::move(d));
      }
      if (protobuf != nullptr) {
        FERRY_ASSIGN_OR_RETURN(
            auto d, transform::ProtobufDecoder::Create(
                        input, {.schemas = protobuf, .columns = columns, .observe = observe}));
        return std::unique_ptr<transform::Decoder>(std::move(d));
      }
      FERRY_ASSIGN_OR_RETURN(auto d,
                             transform::JsonDecoder::Create(input, {.columns = columns,
                                                                    .observe = observe,
                                                                    .observe_misfits = observe,
                                                                    .dates_keep_time = widen}));
      return std::unique_ptr<transform::Decoder>(std::move(d));
    };
    FERRY_ASSIGN_OR_RETURN(
        auto decoder, factory(InputSchema(*opened.snapshot.schema(), setup.transform.columns)));
    PipelineOptions options{.id = setup.id,
                            .max_rows = setup.max_rows,
                            .max_latency = std::chrono::milliseconds(50),
                            .max_in_flight = setup.max_in_flight,
                            .metadata_columns = metadata_,
                            .transform = setup.transform,
                            .on_bad_record = setup.on_bad_record,
                            .schema_evolution = setup.mode,
                            .evolution_limits = setup.limits,
                            .decoder_factory = factory,
                            .until_caught_up = true};
    options.dedup = setup.dedup;
    options.upsert = setup.upsert;
    options.seal_hook = setup.seal_hook;
    options.commit.checkpoint = false;
    options.initial_backoff = std::chrono::milliseconds(1);
    bool dead_letter = setup.on_bad_record == OnBadRecord::kDeadLetter;
    FERRY_ASSIGN_OR_RETURN(
        auto pipeline,
        Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                         messages->Factory(), std::move(decoder), &registry_));
    if (dead_letter) {
      FERRY_ASSIGN_OR_RETURN(
          OpenedTable dead,
          OpenOrCreateTable(store, "dead",
                            {.schema_ddl = kDeadLetterSchema,
                             .allow_missing_columns = setup.mode != SchemaEvolution::kNone}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
    }
    return pipeline;
  }

  Status RunOnce(Messages* messages, const Setup& setup) {
    FERRY_ASSIGN_OR_RETURN(auto p, Make(messages, setup));
    StopSignal stop;
    return p->Run(&stop);
  }

  delta::Snapshot Latest(const std::string& name = "events") {
    auto table = delta::Table::Open(store_, name);
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return *snap;
  }
  std::vector<std::string> Rows(const std::string& name = "events") {
    auto table = delta::Table::Open(store_, name);
    auto snap = (*table)->LoadSnapshot();
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<std::string>{};
  }
  // The same with deletion vectors applied (upsert tables), by ferry's file scan.
  std::vector<std::string> LiveRows(const std::string& name = "events") {
    auto table = delta::Table::Open(store_, name);
    auto snap = (*table)->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    std::vector<std::string> out;
    for (const auto& [key, add] : snap->files()) {
      auto batch = delta::ReadLiveFile(**table, *snap, add);
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (batch.ok()) {
        for (std::string& row : testing::RenderRows(*batch)) {
          out.push_back(std::move(row));
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // Versions whose commit holds a metaData, and how many metaData actions the log holds.
  std::vector<int64_t> MetadataVersions(int64_t* actions = nullptr) {
    auto table = delta::Table::Open(store_, "events");
    std::vector<int64_t> out;
    int64_t count = 0;
    for (int64_t v = 1; v <= Latest().version(); ++v) {
      auto commit = (*table)->ReadCommit(v);
      EXPECT_TRUE(commit.ok());
      int64_t here = 0;
      for (const delta::Action& a : *commit) {
        here += std::holds_alternative<delta::Metadata>(a) ? 1 : 0;
      }
      if (here > 0) {
        out.push_back(v);
      }
      count += here;
    }
    if (actions != nullptr) {
      *actions = count;
    }
    return out;
  }
  double Metric(std::string_view name, const std::string& pipeline = "events") {
    return registry_.Value(name, {{"pipeline", pipeline}});
  }
  double Dropped(const std::string& field) {
    return registry_.Value("ferry_dropped_fields_total",
                           {{"pipeline", "events"}, {"field", field}});
  }
};

}  // namespace ferry::pipeline::evolution_test
