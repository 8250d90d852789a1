// ChangeOp: what one message does to the row of its key in an upsert pipeline (mode = "upsert",
// docs/cdc.md): an upsert (insert the row, or replace the row with the same key) or a delete.
//
// Where it comes from:
//   - a decoder that reads a change envelope (Debezium's: op c/r/u = upsert, d = delete) sets it
//     per message, readable through Decoder::last_op() after a successful Append. On a delete
//     the row it appended carries at least the key columns (from the envelope's `before`, or the
//     message key); the other columns may be null, and the pipeline uses only the key.
//   - a plain keyed message is an upsert; a tombstone (a null value, as a compacted topic means
//     it) is a delete, decided by the pipeline from the key alone (no decoder runs).
// Append pipelines ignore it: every decoder reports kUpsert unless it read an envelope.
#pragma once

#include <cstdint>

namespace ferry::transform {

enum class ChangeOp : uint8_t {
  kUpsert,
  kDelete,
};

}  // namespace ferry::transform
