#include "ferry/delta/actions.h"

namespace ferry::delta {

std::string DeletionVector::UniqueId() const {
  std::string id = storage_type + path_or_inline_dv;
  if (offset.has_value()) {
    id += "@" + std::to_string(*offset);
  }
  return id;
}

std::string CanonicalPath(std::string_view path) {
  if (path.substr(0, 8) == "file:///") {
    return "file:" + std::string(path.substr(7));
  }
  if (!path.empty() && path.front() == '/') {
    return "file:" + std::string(path);
  }
  return std::string(path);
}

const char* ActionName(const Action& action) {
  struct Namer {
    const char* operator()(const Protocol&) const { return "protocol"; }
    const char* operator()(const Metadata&) const { return "metaData"; }
    const char* operator()(const AddFile&) const { return "add"; }
    const char* operator()(const RemoveFile&) const { return "remove"; }
    const char* operator()(const Txn&) const { return "txn"; }
    const char* operator()(const DomainMetadata&) const { return "domainMetadata"; }
    const char* operator()(const CommitInfo&) const { return "commitInfo"; }
    const char* operator()(const AddCdcFile&) const { return "cdc"; }
    const char* operator()(const CheckpointMetadata&) const { return "checkpointMetadata"; }
    const char* operator()(const Sidecar&) const { return "sidecar"; }
  };
  return std::visit(Namer{}, action);
}

}  // namespace ferry::delta
