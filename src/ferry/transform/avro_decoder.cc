#include "ferry/transform/avro_decoder.h"

#include <algorithm>
#include <utility>

#include "ferry/transform/confluent_wire.h"

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
    if (decoder->options_.observe) {
      decoder->fixed_new_fields_ = NewFields(*decoder->options_.writer_schema, *decoder->fixed_);
    }
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

std::vector<FieldObservation> AvroDecoder::NewFields(const avro::Schema& writer,
                                                     const avro::AvroRowReader& reader) {
  std::vector<FieldObservation> out;
  for (const std::string& name : reader.unmatched_fields()) {
    for (const avro::FieldDef& field : writer.root().fields) {
      if (field.name != name) {
        continue;
      }
      // A type with no column (a recursive record) stays skipped.
      if (Result<avro::ColumnType> type = avro::ToColumnType(*field.type, name); type.ok()) {
        out.push_back({.path = {name}, .type = type->type, .missing = true});
      }
    }
  }
  return out;
}

Status AvroDecoder::Read(const avro::AvroRowReader& reader,
                         const std::vector<FieldObservation>& new_fields, std::string_view datum,
                         columnar::RecordBatch* batch) {
  Status st = reader.Append(datum, batch);
  if (!new_fields.empty()) {
    observations_ = new_fields;
  }
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
      if (options_.observe) {
        new_fields_[id] = NewFields(**schema, **made);
      }
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
  if (fixed_ != nullptr) {
    return Read(*fixed_, fixed_new_fields_, payload, batch);
  }
  FERRY_ASSIGN_OR_RETURN(ConfluentFrame frame, ParseConfluentFrame(payload, false));
  FERRY_ASSIGN_OR_RETURN(const avro::AvroRowReader* reader, ReaderFor(frame.schema_id));
  static const std::vector<FieldObservation> kNone;
  auto fields = new_fields_.find(frame.schema_id);
  Status st =
      Read(*reader, fields == new_fields_.end() ? kNone : fields->second, frame.payload, batch);
  if (!st.ok() && st.code() == StatusCode::kInvalidArgument) {
    return InvalidArgument("schema id {}: {}", frame.schema_id, st.message());
  }
  return st;
}

}  // namespace ferry::transform
