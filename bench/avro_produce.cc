// Preloads a Kafka topic with the nine-field rows (nine_field_row.h) for the Avro ingestion
// benchmark (tools/bench_avro_ingest.sh): a bench tool, not a product feature, because
// `ferry produce kafka` writes text templates only.
//
//   avro_produce schema                          prints the writer schema (an .avsc file)
//   avro_produce avro|json|spark-json BROKERS TOPIC COUNT
//                                                sends rows 1..COUNT of the seeded generator,
//                                                round-robin over the topic's partitions
//
// `avro` sends each row as an unframed Avro datum (no Confluent frame, so no registry: ferry
// reads them with `avro_schema_file`), `json` the same row as JSON text; a run of each with the
// same COUNT sends the same rows. `spark-json` sends them with the timestamp as a Spark-style
// `dateTime` string (ToSparkJson; tools/bench_spark.sh). Exit status 0 when every message was
// delivered.
#include <librdkafka/rdkafka.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "nine_field_row.h"

#include "ferry/source/kafka/kafka_conf.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace {

using ferry::source::kafka::ErrorPtr;
using ferry::source::kafka::KafkaPtr;
using ferry::source::kafka::TopicPtr;

struct Deliveries {
  int64_t delivered = 0;
  int64_t failed = 0;
};

void OnDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<Deliveries*>(opaque);
  ++(m->err == RD_KAFKA_RESP_ERR_NO_ERROR ? d->delivered : d->failed);
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "avro_produce: %s\n", what.c_str());
  return 1;
}

int32_t PartitionCount(rd_kafka_t* rk, const std::string& topic) {
  TopicPtr handle(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  for (int attempt = 0; attempt < 50; ++attempt) {
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk, 0, handle.get(), &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      int32_t n = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR
                      ? md->topics[0].partition_cnt
                      : 0;
      rd_kafka_metadata_destroy(md);
      if (n > 0) {
        return n;
      }
    }
    rd_kafka_poll(rk, 200);
  }
  return 0;
}

// rd_kafka_produceva rather than the rd_kafka_producev macros (GNU statement expressions).
rd_kafka_resp_err_t Send(rd_kafka_t* rk, const std::string& topic, int32_t partition,
                         const std::string& value) {
  rd_kafka_vu_t vus[4] = {};
  vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[0].u.cstr = topic.c_str();
  vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[1].u.i32 = partition;
  vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[2].u.mem.ptr = const_cast<char*>(value.data());
  vus[2].u.mem.size = value.size();
  vus[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[3].u.i = RD_KAFKA_MSG_F_COPY;
  while (true) {
    ErrorPtr error(rd_kafka_produceva(rk, vus, 4));
    rd_kafka_resp_err_t err =
        error == nullptr ? RD_KAFKA_RESP_ERR_NO_ERROR : rd_kafka_error_code(error.get());
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return err;
    }
    rd_kafka_poll(rk, 10);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "schema") {
    std::printf("%s\n", ferry::bench::kNineFieldAvroSchema);
    return 0;
  }
  const std::string mode = argc == 5 ? argv[1] : "";
  if (mode != "avro" && mode != "json" && mode != "spark-json") {
    return Fail(
        "usage: avro_produce schema | avro_produce avro|json|spark-json BROKERS TOPIC COUNT");
  }
  const std::string topic = argv[3];
  const int64_t count = std::atoll(argv[4]);

  Deliveries deliveries;
  auto conf = ferry::source::kafka::NewConf({{"bootstrap.servers", argv[2]},
                                             {"client.id", "avro-produce"},
                                             {"linger.ms", "50"},
                                             {"batch.size", "1000000"}});
  if (!conf.ok()) {
    return Fail(conf.status().ToString());
  }
  rd_kafka_conf_set_dr_msg_cb(conf->get(), &OnDelivery);
  rd_kafka_conf_set_opaque(conf->get(), &deliveries);
  auto rk = ferry::source::kafka::NewClient(RD_KAFKA_PRODUCER, std::move(conf).value());
  if (!rk.ok()) {
    return Fail(rk.status().ToString());
  }
  // Round-robin ourselves: without a key, librdkafka's sticky partitioner fills one partition
  // at a time (as `ferry produce kafka`).
  const int32_t partitions = PartitionCount(rk->get(), topic);
  if (partitions == 0) {
    return Fail("no metadata for topic " + topic);
  }
  ferry::bench::NineFieldRows gen;
  int64_t refused = 0;
  for (int64_t i = 0; i < count; ++i) {
    ferry::bench::NineFieldRow row = gen.Next(i + 1);
    std::string value = mode == "avro"   ? ferry::bench::ToAvro(row)
                        : mode == "json" ? ferry::bench::ToJson(row)
                                         : ferry::bench::ToSparkJson(row);
    if (Send(rk->get(), topic, static_cast<int32_t>(i % partitions), value) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++refused;
    }
    if ((i & 255) == 0) {
      rd_kafka_poll(rk->get(), 0);
    }
  }
  for (int i = 0; i < 600 && rd_kafka_outq_len(rk->get()) > 0; ++i) {
    rd_kafka_flush(rk->get(), 1000);
  }
  std::fprintf(
      stderr,
      "avro_produce: %lld of %lld %s messages delivered to '%s'; %lld failed, %lld refused\n",
      static_cast<long long>(deliveries.delivered), static_cast<long long>(count), argv[1],
      topic.c_str(), static_cast<long long>(deliveries.failed), static_cast<long long>(refused));
  return deliveries.delivered == count ? 0 : 1;
}
