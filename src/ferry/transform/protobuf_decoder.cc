#include "ferry/transform/protobuf_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/field_path.h"

namespace ferry::transform {

Result<std::unique_ptr<ProtobufDecoder>> ProtobufDecoder::Create(columnar::SchemaPtr batch_schema,
                                                                 ProtobufDecoderOptions options) {
  if ((options.message == nullptr) == (options.schemas == nullptr)) {
    return InvalidArgument(
        "Protobuf decoder: give either a fixed message type (unframed messages) or a schema "
        "registry (framed messages), not {}",
        options.message == nullptr ? "neither" : "both");
  }
  if (!options.whole_message_column.empty()) {
    options.columns = {options.whole_message_column};
    options.observe = false;
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<int> columns,
                         OutputColumns(*batch_schema, options.columns, "Protobuf decoder"));
  std::unique_ptr<ProtobufDecoder> decoder(
      new ProtobufDecoder(std::move(batch_schema), std::move(options), std::move(columns)));
  if (decoder->options_.message != nullptr) {
    const std::shared_ptr<const protobuf::MessageSchema>& message = decoder->options_.message;
    FERRY_ASSIGN_OR_RETURN(
        Reader reader,
        decoder->MakeReader(message, fmt::format("message {}", message->root().full_name)));
    decoder->fixed_ = std::make_unique<Reader>(std::move(reader));
  }
  return decoder;
}

Result<ProtobufDecoder::Reader> ProtobufDecoder::MakeReader(
    const std::shared_ptr<const protobuf::MessageSchema>& writer, std::string writer_name) const {
  Reader out;
  out.dropped.writer = std::move(writer_name);
  if (!options_.whole_message_column.empty()) {
    FERRY_ASSIGN_OR_RETURN(out.reader, protobuf::ProtobufRowReader::CreateForColumn(
                                           writer, *batch_schema_, columns_.front()));
    return out;
  }
  FERRY_ASSIGN_OR_RETURN(out.reader,
                         protobuf::ProtobufRowReader::Create(writer, *batch_schema_, columns_));
  for (const protobuf::UnmatchedField& field : out.reader->unmatched_fields()) {
    std::string path = JoinPath(field.path);
    out.dropped.fields.push_back(path);
    if (!options_.observe) {
      continue;
    }
    // A type with no column (a recursive message) stays dropped.
    if (auto type = protobuf::FieldColumnType(*writer, *field.field, path); type.ok()) {
      out.new_fields.push_back({.path = field.path, .type = type->type, .missing = true});
    }
  }
  return out;
}

Status ProtobufDecoder::Read(Reader* reader, std::string_view message,
                             columnar::RecordBatch* batch) {
  Status st = reader->reader->Append(message, batch);
  if (!reader->new_fields.empty()) {
    observations_ = reader->new_fields;
  }
  last_dropped_ = st.ok() && !reader->dropped.fields.empty() ? &reader->dropped : nullptr;
  return st;
}

Result<ProtobufDecoder::Reader*> ProtobufDecoder::ReaderFor(const Key& key) {
  auto it = readers_.find(key);
  if (it == readers_.end()) {
    const int32_t id = key.first;
    Result<std::shared_ptr<const protobuf::ProtoSchema>> schema = options_.schemas->Get(id);
    if (!schema.ok() && schema.status().code() == StatusCode::kUnavailable) {
      return schema.status();  // not kept: the next message asks again
    }
    auto build = [&]() -> Result<Reader> {
      if (!schema.ok()) {
        const Status& st = schema.status();
        return InvalidArgument("schema id {}: {}", id,
                               st.code() == StatusCode::kNotFound
                                   ? "unknown to the schema registry (" + st.message() + ")"
                                   : st.message());
      }
      auto message = (*schema)->MessageAt(key.second);
      if (!message.ok()) {
        return InvalidArgument("schema id {}: {}", id, message.status().message());
      }
      auto made = MakeReader(
          *message, fmt::format("schema id {} message {}", id, (*message)->root().full_name));
      if (!made.ok()) {
        return InvalidArgument("schema id {}: {}", id, made.status().message());
      }
      return made;
    };
    it = readers_.emplace(key, build()).first;
  }
  if (!it->second.ok()) {
    return it->second.status();
  }
  return &*it->second;
}

Status ProtobufDecoder::Append(std::string_view payload, columnar::RecordBatch* batch) {
  last_dropped_ = nullptr;
  if (fixed_ != nullptr) {
    return Read(fixed_.get(), payload, batch);
  }
  FERRY_ASSIGN_OR_RETURN(ConfluentFrame frame, ParseConfluentFrame(payload, true));
  Key key(frame.schema_id, std::move(frame.message_indexes));
  FERRY_ASSIGN_OR_RETURN(Reader * reader, ReaderFor(key));
  Status st = Read(reader, frame.payload, batch);
  if (!st.ok() && st.code() == StatusCode::kInvalidArgument) {
    return InvalidArgument("schema id {}: {}", frame.schema_id, st.message());
  }
  return st;
}

}  // namespace ferry::transform
