#include "ferry/delta/deletion_vector.h"

#include <zlib.h>

#include <array>
#include <utility>

#include "ferry/base/endian.h"
#include "ferry/base/hex.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/table.h"

namespace ferry::delta {
namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr std::array<int8_t, 256> MakeZ85Values() {
  std::array<int8_t, 256> values{};
  values.fill(-1);
  for (size_t i = 0; i < kZ85Alphabet.size(); ++i) {
    values[static_cast<unsigned char>(kZ85Alphabet[i])] = static_cast<int8_t>(i);
  }
  return values;
}
// Each character's value, -1 outside the alphabet.
constexpr std::array<int8_t, 256> kZ85Values = MakeZ85Values();
constexpr size_t kEncodedUuidChars = 20;
constexpr uint8_t kFileFormatVersion = 1;
// A DV beyond this is not something Spark writes; refusing it bounds the read.
constexpr int64_t kMaxDeletionVectorBytes = int64_t{1} << 30;

uint32_t LoadBE32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

void AppendBE32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

uint32_t Crc32(std::string_view bytes) {
  return static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                     reinterpret_cast<const Bytef*>(bytes.data()),
                                     static_cast<uInt>(bytes.size())));
}

Result<std::string> UuidBytes(std::string_view uuid) {
  std::string out;
  auto hex = HexDigitValue;
  for (size_t i = 0; i < uuid.size();) {
    if (uuid[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23)) {
      ++i;
      continue;
    }
    if (i + 1 >= uuid.size() || hex(uuid[i]) < 0 || hex(uuid[i + 1]) < 0) {
      return InvalidArgument("'{}' is not a UUID", uuid);
    }
    out.push_back(static_cast<char>(hex(uuid[i]) * 16 + hex(uuid[i + 1])));
    i += 2;
  }
  if (out.size() != 16 || uuid.size() != 36) {
    return InvalidArgument("'{}' is not a UUID", uuid);
  }
  return out;
}

std::string UuidText(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out.push_back('-');
    }
    const auto b = static_cast<unsigned char>(bytes[i]);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string FileName(std::string_view prefix, std::string_view uuid_text) {
  std::string name = "deletion_vector_" + std::string(uuid_text) + ".bin";
  return prefix.empty() ? name : std::string(prefix) + "/" + name;
}

// The table-relative path of a 'p' DV, if it lies under the table root.
Result<std::string> AbsoluteToRelative(const Table& table, const DeletionVector& dv) {
  FERRY_ASSIGN_OR_RETURN(std::string path, DecodeUriPath(dv.path_or_inline_dv));
  if (path.starts_with("file://")) {
    path = path.substr(7);
  } else if (path.starts_with("file:")) {
    path = path.substr(5);
  } else if (path.starts_with("s3a://") || path.starts_with("s3n://")) {
    path = "s3://" + path.substr(6);
  }
  std::string root = table.store().Describe(table.path().empty() ? "" : table.path());
  while (!root.empty() && root.back() == '/') {
    root.pop_back();
  }
  if (!path.starts_with(root + "/")) {
    return NotSupported("deletion vector file {} is outside the table root {}",
                        dv.path_or_inline_dv, root);
  }
  return path.substr(root.size() + 1);
}

}  // namespace

std::string Z85Encode(std::string_view bytes) {
  std::string padded(bytes);
  padded.resize((bytes.size() + 3) / 4 * 4, '\0');
  std::string out;
  out.reserve(padded.size() / 4 * 5);
  for (size_t i = 0; i < padded.size(); i += 4) {
    uint32_t v = LoadBE32(padded.data() + i);
    std::array<char, 5> group{};
    for (int k = 4; k >= 0; --k) {
      group[static_cast<size_t>(k)] = kZ85Alphabet[v % 85];
      v /= 85;
    }
    out.append(group.data(), group.size());
  }
  return out;
}

Result<std::string> Z85Decode(std::string_view text) {
  if (text.size() % 5 != 0) {
    return InvalidArgument("Z85 text of {} characters (not a multiple of 5)", text.size());
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    uint64_t v = 0;
    for (size_t k = 0; k < 5; ++k) {
      const int8_t d = kZ85Values[static_cast<unsigned char>(text[i + k])];
      if (d < 0) {
        return InvalidArgument("Z85: bad character at offset {}", i + k);
      }
      v = v * 85 + static_cast<uint64_t>(d);
    }
    if (v > 0xFFFFFFFFu) {
      return InvalidArgument("Z85: group at offset {} overflows 32 bits", i);
    }
    AppendBE32(&out, static_cast<uint32_t>(v));
  }
  return out;
}

std::string SerializeDeletionVector(const RoaringBitmap64& rows) {
  std::string out;
  AppendLE<uint32_t>(&out, kDeletionVectorMagic);
  out += rows.Serialize();
  return out;
}

Result<RoaringBitmap64> DeserializeDeletionVector(std::string_view bytes,
                                                  uint64_t max_cardinality) {
  if (bytes.size() < 4) {
    return DataLoss("a deletion vector of {} bytes", bytes.size());
  }
  if (const auto magic = LoadLE<uint32_t>(bytes.data()); magic != kDeletionVectorMagic) {
    return DataLoss("deletion vector magic number {} (the portable format's is {})", magic,
                    kDeletionVectorMagic);
  }
  return RoaringBitmap64::Deserialize(bytes.substr(4), max_cardinality);
}

DeletionVector InlineDeletionVector(const RoaringBitmap64& rows) {
  const std::string bytes = SerializeDeletionVector(rows);
  DeletionVector dv;
  dv.storage_type = "i";
  dv.path_or_inline_dv = Z85Encode(bytes);
  dv.size_in_bytes = static_cast<int32_t>(bytes.size());
  dv.cardinality = static_cast<int64_t>(rows.Cardinality());
  return dv;
}

Result<std::string> DeletionVectorRelativePath(const DeletionVector& dv) {
  if (dv.storage_type != "u" || dv.path_or_inline_dv.size() < kEncodedUuidChars) {
    return InvalidArgument("deletion vector '{}' is not a relative ('u') one", dv.UniqueId());
  }
  const size_t split = dv.path_or_inline_dv.size() - kEncodedUuidChars;
  auto bytes = Z85Decode(std::string_view(dv.path_or_inline_dv).substr(split));
  if (!bytes.ok()) {
    return bytes.status().WithContext("deletion vector '{}'", dv.UniqueId());
  }
  return FileName(std::string_view(dv.path_or_inline_dv).substr(0, split), UuidText(*bytes));
}

Result<DeletionVectorFileWriter> DeletionVectorFileWriter::Create(std::string_view uuid,
                                                                  std::string random_prefix) {
  FERRY_ASSIGN_OR_RETURN(std::string bytes, UuidBytes(uuid));
  DeletionVectorFileWriter w;
  w.uuid_ = UuidText(bytes);
  w.prefix_ = std::move(random_prefix);
  w.encoded_uuid_ = Z85Encode(bytes);
  w.bytes_.push_back(static_cast<char>(kFileFormatVersion));
  return w;
}

DeletionVector DeletionVectorFileWriter::Append(const RoaringBitmap64& rows) {
  const std::string data = SerializeDeletionVector(rows);
  DeletionVector dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = prefix_ + encoded_uuid_;
  dv.offset = static_cast<int32_t>(bytes_.size());
  dv.size_in_bytes = static_cast<int32_t>(data.size());
  dv.cardinality = static_cast<int64_t>(rows.Cardinality());
  AppendBE32(&bytes_, static_cast<uint32_t>(data.size()));
  bytes_ += data;
  AppendBE32(&bytes_, Crc32(data));
  return dv;
}

std::string DeletionVectorFileWriter::relative_path() const {
  return FileName(prefix_, uuid_);
}

Result<RoaringBitmap64> LoadDeletionVector(const Table& table, const AddFile& add,
                                           uint64_t num_rows) {
  if (!add.deletion_vector) {
    return RoaringBitmap64();
  }
  const DeletionVector& dv = *add.deletion_vector;
  std::string where = dv.storage_type == "i" ? "inline" : dv.path_or_inline_dv;
  auto fail = [&](const Status& st) {
    return st.WithContext("deletion vector {} of file {}", where, add.path);
  };
  if (dv.cardinality < 0 || static_cast<uint64_t>(dv.cardinality) > num_rows) {
    return fail(DataLoss("cardinality {} for a file of {} rows", dv.cardinality, num_rows));
  }
  if (dv.size_in_bytes < 4 || dv.size_in_bytes > kMaxDeletionVectorBytes) {
    return fail(DataLoss("sizeInBytes {} is out of range", dv.size_in_bytes));
  }
  const auto size = static_cast<size_t>(dv.size_in_bytes);
  std::string data;
  if (dv.storage_type == "i") {
    if (dv.path_or_inline_dv.size() != (size + 3) / 4 * 5) {
      return fail(DataLoss("{} Z85 characters for {} bytes", dv.path_or_inline_dv.size(), size));
    }
    auto decoded = Z85Decode(dv.path_or_inline_dv);
    if (!decoded.ok()) {
      return fail(DataLoss("{}", decoded.status().message()));
    }
    data = decoded->substr(0, size);
  } else if (dv.storage_type == "u" || dv.storage_type == "p") {
    Result<std::string> relative =
        dv.storage_type == "u" ? DeletionVectorRelativePath(dv) : AbsoluteToRelative(table, dv);
    if (!relative.ok()) {
      return fail(relative.status().code() == StatusCode::kNotSupported
                      ? relative.status()
                      : DataLoss("{}", relative.status().message()));
    }
    const std::string key = table.Key(*relative);
    where = table.store().Describe(key);
    const int64_t offset = dv.offset.value_or(0);
    if (offset < 0) {
      return fail(DataLoss("negative offset {}", offset));
    }
    // The file's version byte, then size + data + checksum at `offset`, inside the file.
    auto file = table.store().OpenForRead(key);
    if (!file.ok()) {
      return fail(DataLossUnlessRetryable(file.status(), "deletion vector file is unreadable"));
    }
    const uint64_t file_size = (*file)->size();
    if (file_size < 1 || static_cast<uint64_t>(offset) + size + 8 > file_size) {
      return fail(DataLoss("{} bytes at offset {} do not fit in a file of {} bytes", size + 8,
                           offset, file_size));
    }
    std::string version;
    std::string framed;
    Status read = (*file)->ReadAt(0, 1, &version);
    if (read.ok()) {
      read = (*file)->ReadAt(static_cast<uint64_t>(offset), size + 8, &framed);
    }
    if (!read.ok()) {
      return fail(DataLossUnlessRetryable(read, "deletion vector file is unreadable"));
    }
    if (static_cast<uint8_t>(version[0]) != kFileFormatVersion) {
      return fail(DataLoss("unknown deletion vector file format version {}",
                           static_cast<int>(static_cast<uint8_t>(version[0]))));
    }
    const uint32_t stored_size = LoadBE32(framed.data());
    if (stored_size != size) {
      return fail(DataLoss("the file says {} bytes at offset {}, the log says {}", stored_size,
                           offset, size));
    }
    data = framed.substr(4, size);
    const uint32_t checksum = LoadBE32(framed.data() + 4 + size);
    if (checksum != Crc32(data)) {
      return fail(DataLoss("checksum mismatch at offset {} (stored {:08x}, computed {:08x})",
                           offset, checksum, Crc32(data)));
    }
  } else {
    return fail(DataLoss("unknown storage type '{}'", dv.storage_type));
  }
  auto rows = DeserializeDeletionVector(data, static_cast<uint64_t>(dv.cardinality));
  if (!rows.ok()) {
    return fail(rows.status());
  }
  if (rows->Cardinality() != static_cast<uint64_t>(dv.cardinality)) {
    return fail(DataLoss("holds {} rows, the log says {}", rows->Cardinality(), dv.cardinality));
  }
  if (std::optional<uint64_t> max = rows->Max(); max && *max >= num_rows) {
    return fail(DataLoss("deletes row {} of a file of {} rows", *max, num_rows));
  }
  return rows;
}

}  // namespace ferry::delta
