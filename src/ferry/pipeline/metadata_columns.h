// Metadata columns: broker facts about a message (Kafka key, topic, partition, offset, timestamp,
// headers; JetStream subject, sequence, msg id) stored as table columns on request
// (`metadata_columns = { offset = "_offset" }` in the pipeline config).
//
// A requested column the declared schema does not name is appended to it with its default
// type; a declared one must have a type the value fits (ResolveSchema says which otherwise).
//
//   kind       default type                 also accepted
//   key        STRING                       BINARY
//   topic      STRING                       (JetStream: the stream name)
//   partition  INT                          BIGINT   (-1 for JetStream)
//   offset     BIGINT                       (Kafka offset; JetStream: the stream sequence)
//   sequence   BIGINT                       (JetStream stream sequence; Kafka: the offset)
//   timestamp  TIMESTAMP                    BIGINT (microseconds since the epoch)
//   headers    MAP<STRING, STRING>          MAP<STRING, BINARY>
//   subject    STRING
//   msg_id     STRING                       (Nats-Msg-Id; null when absent)
//   stream     STRING                       (JetStream stream; Kafka: the topic)
//
// Thread-safety: MetadataWriter is used by one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

enum class MetadataKind {
  kKey,
  kTopic,
  kPartition,
  kOffset,
  kSequence,
  kTimestamp,
  kHeaders,
  kSubject,
  kMsgId,
  kStream,
};

// "key", "topic", ... InvalidArgument listing the valid names otherwise.
Result<MetadataKind> ParseMetadataKind(std::string_view name);
std::string_view MetadataKindName(MetadataKind kind);

// The table schema for a declared schema plus the requested metadata columns (kind name ->
// column name): declared columns keep their place, missing metadata columns are appended in
// the order of `requested`. InvalidArgument naming the column when a type does not fit or two
// kinds share a column.
Result<columnar::SchemaPtr> ResolveSchema(const columnar::Schema& declared,
                                          const std::map<std::string, std::string>& requested);

// Fills the metadata columns of a batch, one row per message.
class MetadataWriter {
 public:
  // InvalidArgument when a requested column is missing from `schema` or has a type it cannot
  // take.
  static Result<MetadataWriter> Create(const columnar::Schema& schema,
                                       const std::map<std::string, std::string>& requested);

  // The batch columns this writer fills (the decoder fills the others).
  const std::vector<std::string>& column_names() const { return names_; }
  // Appends one row to each metadata column of `batch`.
  void Append(const source::Message& message, columnar::RecordBatch* batch) const;

 private:
  struct Slot {
    MetadataKind kind;
    int column;
    columnar::TypeId type;
  };
  std::vector<Slot> slots_;
  std::vector<std::string> names_;
};

}  // namespace ferry::pipeline
