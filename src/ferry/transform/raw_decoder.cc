#include "ferry/transform/raw_decoder.h"

#include "ferry/transform/utf8.h"

namespace ferry::transform {

Result<std::unique_ptr<RawDecoder>> RawDecoder::Create(columnar::SchemaPtr schema,
                                                       RawDecoderOptions options) {
  std::optional<int> column = schema->FieldIndex(options.column);
  if (!column) {
    return InvalidArgument("raw decoder: no column '{}' in the schema", options.column);
  }
  columnar::TypeId id = schema->field(*column).type->id();
  if (id != columnar::TypeId::kString && id != columnar::TypeId::kBinary) {
    return InvalidArgument("raw decoder: column '{}' is {}, not STRING or BINARY", options.column,
                           schema->field(*column).type->ToString());
  }
  return std::unique_ptr<RawDecoder>(new RawDecoder(*column, id == columnar::TypeId::kString));
}

Status RawDecoder::Append(std::string_view payload, columnar::RecordBatch* batch) {
  if (validate_utf8_ && !IsValidUtf8(payload)) {
    return InvalidArgument("payload is not valid UTF-8 (byte offset {}) for STRING column '{}'",
                           FindInvalidUtf8(payload), batch->schema().field(columns_[0]).name);
  }
  batch->mutable_column(columns_[0])->As<columnar::BinaryColumn>()->Append(payload);
  return Status::OK();
}

}  // namespace ferry::transform
