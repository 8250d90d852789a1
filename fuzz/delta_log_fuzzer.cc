// libFuzzer target: the Delta log reader (delta/actions_json.h, log_segment.h, table.h).
// The input is split on NUL bytes into parts. Part i (up to 8) becomes commit file i of an
// in-memory table; a part starting with "LC" becomes _last_checkpoint (the rest of the part).
// Then:
//   1. every commit text goes through ParseActions; whatever parses must print and parse back
//      to the same JSON (ActionToJson is ParseActionLine's inverse on what it accepts);
//   2. the table is loaded (latest, every earlier version by time travel, and Update() from
//      version 0); errors must be NotFound, DataLoss, NotSupported or InvalidArgument, and a
//      snapshot that loads must answer its accessors.
// Anything else aborts.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/check.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/table.h"
#include "ferry/storage/memory_store.h"

namespace {

void CheckExpectedError(const ferry::Status& status) {
  using ferry::StatusCode;
  StatusCode code = status.code();
  FERRY_CHECK_MSG(code == StatusCode::kNotFound || code == StatusCode::kDataLoss ||
                      code == StatusCode::kNotSupported || code == StatusCode::kInvalidArgument,
                  status.ToString());
}

void CheckRoundTrip(std::string_view text) {
  auto actions = ferry::delta::ParseActions(text);
  if (!actions.ok()) {
    CheckExpectedError(actions.status());
    return;
  }
  for (const ferry::delta::Action& action : *actions) {
    std::string json = ferry::delta::ActionToJson(action);
    auto again = ferry::delta::ParseActionLine(json);
    FERRY_CHECK_MSG(again.ok() && again->has_value(), json);
    std::string json_again = ferry::delta::ActionToJson(**again);
    FERRY_CHECK_MSG(json == json_again, json + " != " + json_again);
  }
}

void CheckSnapshot(const ferry::delta::Snapshot& snapshot) {
  FERRY_CHECK(snapshot.schema() != nullptr);
  (void)snapshot.data_schema();
  (void)snapshot.num_files();
  (void)snapshot.size_bytes();
  (void)snapshot.num_records();
  (void)snapshot.properties();
  (void)snapshot.position("app");
  (void)snapshot.timestamp_ms();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto store = std::make_shared<ferry::storage::InMemoryStore>();
  int64_t commits = 0;
  while (commits < 8) {
    size_t end = input.find('\0');
    std::string_view part = input.substr(0, end);
    if (part.substr(0, 2) == "LC") {
      FERRY_CHECK(
          store
              ->Put(std::string("t/_delta_log/") + std::string(ferry::delta::kLastCheckpointName),
                    part.substr(2))
              .ok());
    } else {
      CheckRoundTrip(part);
      FERRY_CHECK(store->Put("t/_delta_log/" + ferry::delta::CommitFileName(commits), part).ok());
      commits++;
    }
    if (end == std::string_view::npos) {
      break;
    }
    input.remove_prefix(end + 1);
  }

  auto table = ferry::delta::Table::Open(store, "t");
  FERRY_CHECK(table.ok());
  auto latest = (*table)->LoadSnapshot();
  if (!latest.ok()) {
    CheckExpectedError(latest.status());
    return 0;
  }
  CheckSnapshot(*latest);
  FERRY_CHECK(latest->version() >= 0 && latest->version() < commits);
  for (int64_t v = 0; v <= latest->version(); v++) {
    auto old = (*table)->LoadSnapshot(v);
    if (!old.ok()) {
      // An early version may lack protocol or metaData that a later one adds.
      CheckExpectedError(old.status());
      continue;
    }
    CheckSnapshot(*old);
    FERRY_CHECK(old->version() == v);
    auto updated = (*table)->Update(*old);
    if (updated.ok()) {
      FERRY_CHECK(updated->version() == latest->version());
      FERRY_CHECK(updated->num_files() == latest->num_files());
      FERRY_CHECK(updated->txns().size() == latest->txns().size());
    } else {
      CheckExpectedError(updated.status());
    }
  }
  return 0;
}
