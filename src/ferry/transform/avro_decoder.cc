#include "ferry/transform/avro_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ferry/base/check.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/field_path.h"

namespace ferry::transform {

Result<std::unique_ptr<AvroDecoder>> AvroDecoder::Create(columnar::SchemaPtr batch_schema,
                                                         AvroDecoderOptions options) {
  if ((options.writer_schema == nullptr) == (options.schemas == nullptr)) {
    return InvalidArgument(
        "Avro decoder: give either a fixed writer schema (unframed messages) or a schema "
        "registry (framed messages), not {}",
        options.writer_schema == nullptr ? "neither" : "both");
  }
  if (!options.whole_datum_column.empty()) {
    options.columns = {options.whole_datum_column};
    options.observe = false;
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<int> columns,
                         OutputColumns(*batch_schema, options.columns, "Avro decoder"));
  std::unique_ptr<AvroDecoder> decoder(
      new AvroDecoder(std::move(batch_schema), std::move(options), std::move(columns)));
  if (decoder->options_.writer_schema != nullptr) {
    FERRY_ASSIGN_OR_RETURN(decoder->fixed_, decoder->MakeReader(decoder->options_.writer_schema));
    decoder->fixed_skipped_ = decoder->SkippedBy(
        *decoder->fixed_,
        fmt::format("writer schema {}", decoder->options_.writer_schema->root().name));
  }
  return decoder;
}

Result<std::unique_ptr<avro::AvroRowReader>> AvroDecoder::MakeReader(
    std::shared_ptr<const avro::Schema> writer) const {
  if (!options_.whole_datum_column.empty()) {
    return avro::AvroRowReader::CreateForColumn(std::move(writer), *batch_schema_,
                                                columns_.front());
  }
  return avro::AvroRowReader::Create(std::move(writer), *batch_schema_, columns_);
}

AvroDecoder::Skipped AvroDecoder::SkippedBy(const avro::AvroRowReader& reader,
                                            std::string writer) const {
  Skipped out;
  out.dropped.writer = std::move(writer);
  for (const avro::UnmatchedField& field : reader.unmatched_fields()) {
    std::string path = JoinPath(field.path);
    out.dropped.fields.push_back(path);
    if (!options_.observe) {
      continue;
    }
    // A type with no column (a recursive record) stays dropped.
    if (Result<avro::ColumnType> type = avro::ToColumnType(*field.type, path); type.ok()) {
      out.new_fields.push_back({.path = field.path, .type = type->type, .missing = true});
    }
  }
  return out;
}

Status AvroDecoder::Read(const avro::AvroRowReader& reader, const Skipped& skipped,
                         std::string_view datum, columnar::RecordBatch* batch) {
  Status st = reader.Append(datum, batch);
  if (!skipped.new_fields.empty()) {
    observations_ = skipped.new_fields;
  }
  last_dropped_ = st.ok() && !skipped.dropped.fields.empty() ? &skipped.dropped : nullptr;
  return st;
}

Result<const avro::AvroRowReader*> AvroDecoder::ReaderFor(int32_t id) {
  auto it = readers_.find(id);
  if (it == readers_.end()) {
    Result<std::shared_ptr<const avro::Schema>> schema = options_.schemas->Get(id);
    if (!schema.ok() && schema.status().code() == StatusCode::kUnavailable) {
      return schema.status();  // not kept: the next message asks again
    }
    auto build = [&]() -> Result<std::unique_ptr<avro::AvroRowReader>> {
      if (!schema.ok()) {
        const Status& st = schema.status();
        return InvalidArgument("schema id {}: {}", id,
                               st.code() == StatusCode::kNotFound
                                   ? "unknown to the schema registry (" + st.message() + ")"
                                   : st.message());
      }
      auto made = MakeReader(*schema);
      if (!made.ok()) {
        return InvalidArgument("schema id {}: {}", id, made.status().message());
      }
      skipped_[id] = SkippedBy(**made, fmt::format("schema id {}", id));
      return made;
    };
    Result<std::unique_ptr<avro::AvroRowReader>> reader = build();
    it = readers_.emplace(id, std::move(reader)).first;
  }
  if (!it->second.ok()) {
    return it->second.status();
  }
  return it->second->get();
}

Status AvroDecoder::Append(std::string_view payload, columnar::RecordBatch* batch) {
  last_dropped_ = nullptr;
  if (fixed_ != nullptr) {
    return Read(*fixed_, fixed_skipped_, payload, batch);
  }
  FERRY_ASSIGN_OR_RETURN(ConfluentFrame frame, ParseConfluentFrame(payload, false));
  FERRY_ASSIGN_OR_RETURN(const avro::AvroRowReader* reader, ReaderFor(frame.schema_id));
  auto skipped = skipped_.find(frame.schema_id);
  FERRY_CHECK(skipped != skipped_.end());  // made with the reader
  Status st = Read(*reader, skipped->second, frame.payload, batch);
  if (!st.ok() && st.code() == StatusCode::kInvalidArgument) {
    return InvalidArgument("schema id {}: {}", frame.schema_id, st.message());
  }
  return st;
}

}  // namespace ferry::transform
