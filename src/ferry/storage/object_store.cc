#include "ferry/storage/object_store.h"

namespace ferry::storage {

Result<std::string> ObjectStore::Read(std::string_view key) {
  FERRY_ASSIGN_OR_RETURN(auto file, OpenForRead(key));
  std::string out;
  FERRY_RETURN_IF_ERROR(file->ReadAt(0, file->size(), &out));
  return out;
}

Result<std::string> ObjectStore::ReadRange(std::string_view key, uint64_t offset, uint64_t length) {
  FERRY_ASSIGN_OR_RETURN(auto file, OpenForRead(key));
  std::string out;
  FERRY_RETURN_IF_ERROR(file->ReadAt(offset, length, &out));
  return out;
}

Status ObjectStore::DeleteMany(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    FERRY_RETURN_IF_ERROR(Delete(key));
  }
  return Status::OK();
}

Status ValidateKey(std::string_view key) {
  if (key.empty()) {
    return InvalidArgument("object key is empty");
  }
  if (key.find('\0') != std::string_view::npos) {
    return InvalidArgument("object key '{}' contains a NUL byte", key);
  }
  size_t start = 0;
  while (start <= key.size()) {
    size_t slash = key.find('/', start);
    size_t end = slash == std::string_view::npos ? key.size() : slash;
    std::string_view segment = key.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") {
      return InvalidArgument("object key '{}' has an empty, '.' or '..' segment", key);
    }
    if (slash == std::string_view::npos) {
      break;
    }
    start = slash + 1;
  }
  return Status::OK();
}

Status ValidatePrefix(std::string_view prefix) {
  if (prefix.empty()) {
    return Status::OK();
  }
  std::string_view key = prefix;
  if (key.back() == '/') {
    key.remove_suffix(1);
  }
  Status st = ValidateKey(key);
  return st.ok() ? st : InvalidArgument("listing prefix '{}' is not a valid key prefix", prefix);
}

std::string JoinKey(std::string_view a, std::string_view b) {
  while (!a.empty() && a.back() == '/') {
    a.remove_suffix(1);
  }
  while (!b.empty() && b.front() == '/') {
    b.remove_prefix(1);
  }
  if (a.empty()) {
    return std::string(b);
  }
  if (b.empty()) {
    return std::string(a);
  }
  std::string out;
  out.reserve(a.size() + 1 + b.size());
  out.append(a);
  out.push_back('/');
  out.append(b);
  return out;
}

}  // namespace ferry::storage
