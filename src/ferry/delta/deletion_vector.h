// Deletion vectors (Delta PROTOCOL.md, "Deletion Vectors" and "Deletion Vector Format"): the
// set of row indexes of a data file that a DV logically deletes, read from and written to the
// three storage forms of a DeletionVector descriptor (actions.h).
//
// Forms, by storageType:
//   'i'  inline: pathOrInlineDv is the Z85 text of the serialized DV (sizeInBytes bytes before
//        encoding, padded to a multiple of 4);
//   'u'  a file under the table root: pathOrInlineDv is an optional random prefix followed by
//        the 20-character Z85 text of a UUID; the file is
//        "<prefix>/deletion_vector_<uuid>.bin" ("deletion_vector_<uuid>.bin" without prefix);
//   'p'  a file at an absolute path (URI-encoded like add.path); ferry reads it only when it
//        lies under the table root.
// A serialized DV is the magic number 1681511377 (uint32 little-endian) followed by a
// RoaringBitmap64 (roaring_bitmap.h). A DV file is a version byte (1), then per DV, at the
// descriptor's offset: its size (uint32 big-endian, = sizeInBytes), the serialized DV, and the
// CRC-32 of the serialized DV (uint32 big-endian).
//
// Errors: DataLoss for anything that does not match (a bad Z85 character, a wrong size, magic,
// version or checksum, a cardinality other than the descriptor's, a row index at or past the
// file's row count), naming the data file and the DV; a store error keeps its code when the
// caller should retry (DataLossUnlessRetryable). NotSupported for a 'p' DV outside the table.
//
// Thread-safety: stateless functions; DeletionVectorFileWriter is a value, one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/roaring_bitmap.h"

namespace ferry::delta {

class Table;

inline constexpr uint32_t kDeletionVectorMagic = 1681511377;

// Z85 (ZeroMQ RFC 32). Encode pads `bytes` with zeros to a multiple of 4; Decode wants a
// multiple of 5 characters (InvalidArgument otherwise, or for a character outside the alphabet).
std::string Z85Encode(std::string_view bytes);
Result<std::string> Z85Decode(std::string_view text);

// Magic number + bitmap, and back. Deserialize: DataLoss for a wrong magic or a bad bitmap,
// or more than `max_cardinality` values.
std::string SerializeDeletionVector(const RoaringBitmap64& rows);
Result<RoaringBitmap64> DeserializeDeletionVector(std::string_view bytes, uint64_t max_cardinality);

// The descriptor of `rows` stored inline in the log.
DeletionVector InlineDeletionVector(const RoaringBitmap64& rows);

// The table-relative path of a 'u' DV's file (InvalidArgument for another storage type or a
// bad UUID).
Result<std::string> DeletionVectorRelativePath(const DeletionVector& dv);

// Builds one DV file holding several DVs (one per data file). Usage: Append each bitmap, keep
// the descriptors for the add actions, then store bytes() at relative_path() under the table.
class DeletionVectorFileWriter {
 public:
  // `uuid` in canonical form ("d2c639aa-8816-431a-aaf6-d3fe2512ff61"); `random_prefix` may be
  // empty. InvalidArgument for a malformed UUID.
  static Result<DeletionVectorFileWriter> Create(std::string_view uuid,
                                                 std::string random_prefix = "");

  // Appends `rows` and returns its 'u' descriptor.
  DeletionVector Append(const RoaringBitmap64& rows);

  const std::string& bytes() const { return bytes_; }
  std::string relative_path() const;

 private:
  DeletionVectorFileWriter() = default;
  std::string uuid_;
  std::string prefix_;
  std::string encoded_uuid_;  // Z85 of the 16 UUID bytes
  std::string bytes_;
};

// The rows `add`'s deletion vector deletes (empty if it has none), read through the table's
// store. `num_rows`: the data file's row count; every index must lie below it.
Result<RoaringBitmap64> LoadDeletionVector(const Table& table, const AddFile& add,
                                           uint64_t num_rows);

}  // namespace ferry::delta
