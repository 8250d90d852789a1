#include "ferry/app/status_page/table_probe.h"

#include <algorithm>
#include <variant>
#include <vector>

#include "ferry/delta/actions.h"

namespace ferry::app {

Status TableProbe::ReadOne(const delta::Table& table, int64_t version, std::string* operation,
                           int64_t* timestamp_ms) {
  FERRY_ASSIGN_OR_RETURN(std::vector<delta::Action> actions, table.ReadCommit(version));
  operation->clear();
  *timestamp_ms = 0;
  for (const delta::Action& action : actions) {
    if (const auto* info = std::get_if<delta::CommitInfo>(&action)) {
      *operation = info->operation.value_or("");
      *timestamp_ms = info->in_commit_timestamp.value_or(info->timestamp.value_or(0));
    }
  }
  return Status::OK();
}

TableProbe::Times TableProbe::Update(const std::string& path, std::optional<int64_t> latest_version,
                                     std::optional<int64_t> checkpoint_version) {
  Known& known = tables_[path];
  known.times.error.clear();
  if (known.table == nullptr) {
    Result<std::unique_ptr<delta::Table>> table = opener_(path);
    if (!table.ok()) {
      known.times.error = table.status().ToString();
      return known.times;
    }
    known.table = std::move(*table);
  }
  std::string operation;
  int64_t timestamp_ms = 0;
  if (latest_version && *latest_version > known.read_up_to) {
    // Newest first, so the first OPTIMIZE found is the last one; stop at what was read before.
    int64_t oldest = std::max(known.read_up_to + 1, *latest_version - kFirstDepth + 1);
    for (int64_t v = *latest_version; v >= oldest; --v) {
      Status st = ReadOne(*known.table, v, &operation, &timestamp_ms);
      if (st.code() == StatusCode::kNotFound) {
        break;  // log cleanup removed this one and every older one
      }
      if (!st.ok()) {
        known.times.error = st.ToString();
        return known.times;
      }
      if (operation == "OPTIMIZE") {
        known.times.optimize_version = v;
        known.times.optimize_ms = timestamp_ms;
        break;
      }
    }
    known.read_up_to = *latest_version;
  }
  if (checkpoint_version && checkpoint_version != known.times.checkpoint_version) {
    Status st = ReadOne(*known.table, *checkpoint_version, &operation, &timestamp_ms);
    if (st.ok() || st.code() == StatusCode::kNotFound) {
      known.times.checkpoint_version = checkpoint_version;
      known.times.checkpoint_ms =
          st.ok() && timestamp_ms > 0 ? std::optional<int64_t>(timestamp_ms) : std::nullopt;
    } else {
      known.times.error = st.ToString();
    }
  }
  return known.times;
}

}  // namespace ferry::app
