// Test-only: the customers table that both Debezium decoder tests decode into
// (debezium_json_decoder_test.cc, debezium_avro_decoder_test.cc), with the envelope columns and
// the rows they expect, so that both formats are held to the same rows, ops and envelope values:
// the row of the `after` and of the `before` image as row_text_for_test.h prints them,
// Expected() for a whole decoded change, and DecodeChange(), which decodes one message the way
// both tests check it.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/columnar/record_batch.h"
#include "ferry/transform/change_op.h"
#include "ferry/transform/decoder.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform::debezium_customers {

// The row columns id, name, birth (Debezium Date), seen (MicroTimestamp), price (Decimal(10,2)),
// then the envelope columns.
inline constexpr std::string_view kTable =
    "id INT NOT NULL, name STRING, birth DATE, seen TIMESTAMP, price DECIMAL(10,2), "
    "_op STRING, _lsn BIGINT, _source_ts TIMESTAMP, _ts_ms BIGINT, _db STRING";

// Envelope field -> column of kTable.
inline std::map<std::string, std::string> EnvelopeColumns() {
  return {{"op", "_op"},
          {"source.lsn", "_lsn"},
          {"source.ts_ms", "_source_ts"},
          {"ts_ms", "_ts_ms"},
          {"source.db", "_db"}};
}

inline constexpr std::string_view kEnvelopeCells =
    "_op: \"{}\", _lsn: 23734904, _source_ts: 2023-11-14T22:13:20, _ts_ms: 1700000000456, "
    "_db: \"shop\"}}";

// "upsert: {<row>, <envelope cells with op>}" (or "delete: ...").
inline std::string Expected(std::string_view kind, std::string_view row, std::string_view op) {
  return fmt::format("{}: {{{}, {}", kind, row, fmt::format(fmt::runtime(kEnvelopeCells), op));
}

inline constexpr std::string_view kAfterRow =
    "id: 7, name: \"Ada\", birth: 2023-11-14, seen: 2023-11-14T22:13:20.123456, price: 12.34";
inline constexpr std::string_view kBeforeRow =
    "id: 7, name: \"Ad\", birth: null, seen: null, price: -0.01";

// The decoded row as text with its op ("upsert: {...}", "delete: {...}"), or "ERROR: ..." after
// checking that the failed message left the batch as it was.
inline std::string DecodeChange(Decoder* decoder, columnar::RecordBatch* batch,
                                std::string_view message, bool tombstone) {
  int64_t rows = batch->num_rows();
  Status st =
      tombstone ? decoder->AppendTombstone(message, batch) : decoder->Append(message, batch);
  if (!st.ok()) {
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_EQ(batch->num_rows(), rows) << "a failed message changed the batch";
    for (int c = 0; c < batch->num_columns(); ++c) {
      EXPECT_EQ(batch->column(c).length(), rows) << "column " << c;
    }
    return "ERROR: " + st.message();
  }
  EXPECT_EQ(batch->num_rows(), rows + 1);
  Status valid = batch->Validate();
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  return (decoder->last_op() == ChangeOp::kDelete ? "delete: " : "upsert: ") +
         RowText(*batch, rows);
}

// After a message of the writer schema that adds the optional field `email` (a column added in
// the source table) to a decoder that observes: the field is reported once as a new STRING
// column, and named as dropped from the row just decoded.
inline void ExpectEmailObservedAndDropped(Decoder& decoder) {
  ASSERT_TRUE(decoder.has_observations());
  std::vector<FieldObservation> seen = decoder.TakeObservations();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, std::vector<std::string>{"email"});
  EXPECT_EQ(seen[0].type->ToString(), "STRING");
  ASSERT_NE(decoder.last_dropped(), nullptr);
  EXPECT_EQ(decoder.last_dropped()->fields, std::vector<std::string>{"email"});
}

}  // namespace ferry::transform::debezium_customers
