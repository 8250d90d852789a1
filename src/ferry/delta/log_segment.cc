#include "ferry/delta/log_segment.h"

#include <map>

#include "ferry/base/log.h"
#include "ferry/delta/last_checkpoint.h"

namespace ferry::delta {
namespace {

// How far before a time-travel target to look for a checkpoint before listing the whole log.
constexpr int64_t kTimeTravelWindow = 1000;

struct Listing {
  std::map<int64_t, storage::ObjectInfo> commits;
  std::vector<CheckpointFiles> complete;  // ascending by version
  // Multi-part checkpoints with parts missing: version -> description of what is missing.
  std::map<int64_t, std::string> incomplete;
  bool any_file = false;
};

std::string StartAfterKey(const std::string& log_dir, int64_t version) {
  // Every name of `version` sorts after every name of version - 1 (they differ in the digits).
  return version <= 0 ? std::string() : log_dir + "/" + PaddedVersion(version - 1) + "\x7f";
}

Result<Listing> ListLog(storage::ObjectStore& store, const std::string& log_dir,
                        int64_t from_version) {
  storage::ListOptions options;
  options.start_after = StartAfterKey(log_dir, from_version);
  FERRY_ASSIGN_OR_RETURN(auto infos, store.List(log_dir + "/", options));
  Listing out;
  // (version, parts) -> part number -> file
  std::map<std::pair<int64_t, int32_t>, std::map<int32_t, storage::ObjectInfo>> multipart;
  for (auto& info : infos) {
    out.any_file = true;
    std::optional<LogFileName> name = ParseLogFileName(info.key);
    if (!name.has_value()) {
      continue;
    }
    switch (name->kind) {
      case LogFileKind::kCommit:
        out.commits.emplace(name->version, std::move(info));
        break;
      case LogFileKind::kMultiPartCheckpoint:
        multipart[{name->version, name->num_parts}].emplace(name->part, std::move(info));
        break;
      default:
        out.complete.push_back(CheckpointFiles{name->version, name->kind, {std::move(info)}});
        break;
    }
  }
  for (auto& [key, parts] : multipart) {
    auto [version, num_parts] = key;
    if (static_cast<int32_t>(parts.size()) == num_parts) {
      CheckpointFiles cp{version, LogFileKind::kMultiPartCheckpoint, {}};
      for (auto& [part, info] : parts) {
        cp.files.push_back(std::move(info));
      }
      out.complete.push_back(std::move(cp));
      continue;
    }
    for (int32_t part = 1; part <= num_parts; ++part) {
      if (parts.count(part) == 0) {
        out.incomplete[version] =
            fmt::format("{}/{}.checkpoint.{:010}.{:010}.parquet is missing (part {} of {})",
                        log_dir, PaddedVersion(version), part, num_parts, part, num_parts);
        break;
      }
    }
  }
  std::stable_sort(
      out.complete.begin(), out.complete.end(),
      [](const CheckpointFiles& a, const CheckpointFiles& b) { return a.version < b.version; });
  return out;
}

// Prefers, among checkpoints of one version, a single-file one over a multi-part one.
const CheckpointFiles* PickCheckpoint(const Listing& listing, std::optional<int64_t> target) {
  const CheckpointFiles* best = nullptr;
  for (const CheckpointFiles& cp : listing.complete) {
    if (target.has_value() && cp.version > *target) {
      break;
    }
    if (best == nullptr || cp.version > best->version ||
        best->kind == LogFileKind::kMultiPartCheckpoint) {
      best = &cp;
    }
  }
  return best;
}

Result<LogSegment> BuildSegment(const Listing& listing, const std::string& log_dir,
                                std::optional<int64_t> target) {
  LogSegment segment;
  if (!listing.complete.empty()) {
    segment.newest_checkpoint_version = listing.complete.back().version;
  }
  const CheckpointFiles* cp = PickCheckpoint(listing, target);
  int64_t next = 0;
  if (cp != nullptr) {
    segment.checkpoint = *cp;
    segment.version = cp->version;
    next = cp->version + 1;
  }
  for (auto it = listing.commits.lower_bound(next); it != listing.commits.end(); ++it) {
    if (target.has_value() && it->first > *target) {
      break;
    }
    if (it->first != next) {
      // A checkpoint that would have bridged the gap but misses parts is the cause to name.
      auto broken = listing.incomplete.lower_bound(next == 0 ? 0 : next - 1);
      if (broken != listing.incomplete.end() && broken->first < it->first) {
        return DataLoss(
            "{}: version {} is missing and the checkpoint of version {} that would cover it is "
            "incomplete: {}",
            log_dir, next, broken->first, broken->second);
      }
      return DataLoss("{}: the log is not contiguous: version {} is missing ({} follows {})",
                      log_dir, next, CommitFileName(it->first),
                      next == 0 ? std::string("nothing") : CommitFileName(next - 1));
    }
    segment.commits.push_back(CommitFile{it->first, it->second});
    segment.version = it->first;
    next++;
  }
  if (segment.version < 0) {
    if (!listing.incomplete.empty()) {
      return DataLoss("{}: no complete checkpoint to start from: {}", log_dir,
                      listing.incomplete.begin()->second);
    }
    if (!listing.commits.empty()) {
      return DataLoss("{}: the log starts at version {} ({}) and has no checkpoint to start from",
                      log_dir, listing.commits.begin()->first,
                      CommitFileName(listing.commits.begin()->first));
    }
    return NotFound("no Delta table: {} holds no commits or checkpoints", log_dir);
  }
  if (target.has_value() && segment.version != *target) {
    return NotFound("{}: version {} does not exist (the latest is {})", log_dir, *target,
                    listing.commits.empty() ? segment.version : listing.commits.rbegin()->first);
  }
  return segment;
}

}  // namespace

Result<LogSegment> ListLogSegment(storage::ObjectStore& store, const std::string& log_dir,
                                  std::optional<int64_t> target_version) {
  std::optional<LastCheckpoint> hint;
  auto text = store.Read(log_dir + "/" + std::string(kLastCheckpointName));
  if (text.ok()) {
    hint = ParseLastCheckpoint(*text);
    if (!hint.has_value()) {
      FERRY_LOG_WARN("{}/_last_checkpoint does not parse; listing the whole log", log_dir);
    }
  } else if (text.status().code() != StatusCode::kNotFound) {
    return text.status();
  }
  if (hint.has_value() && hint->version > 0 &&
      (!target_version.has_value() || hint->version <= *target_version)) {
    FERRY_ASSIGN_OR_RETURN(Listing listing, ListLog(store, log_dir, hint->version));
    const CheckpointFiles* cp = PickCheckpoint(listing, target_version);
    if (cp != nullptr) {
      return BuildSegment(listing, log_dir, target_version);
    }
    FERRY_LOG_WARN("{}/_last_checkpoint names version {} but no complete checkpoint is there",
                   log_dir, hint->version);
  }
  if (target_version.has_value() && *target_version > kTimeTravelWindow) {
    // Time travel below the hinted checkpoint: a checkpoint shortly before the target usually
    // exists, so list only from there (the listing still runs to the end of the log).
    FERRY_ASSIGN_OR_RETURN(Listing listing,
                           ListLog(store, log_dir, *target_version - kTimeTravelWindow));
    if (PickCheckpoint(listing, target_version) != nullptr) {
      return BuildSegment(listing, log_dir, target_version);
    }
  }
  FERRY_ASSIGN_OR_RETURN(Listing listing, ListLog(store, log_dir, 0));
  if (!listing.any_file && !target_version.has_value()) {
    return NotFound("no Delta table: {} is empty or missing", log_dir);
  }
  return BuildSegment(listing, log_dir, target_version);
}

Result<std::vector<CommitFile>> ListCommitsAfter(storage::ObjectStore& store,
                                                 const std::string& log_dir, int64_t version,
                                                 std::optional<int64_t>* newest_checkpoint) {
  FERRY_ASSIGN_OR_RETURN(Listing listing, ListLog(store, log_dir, version + 1));
  if (!listing.complete.empty()) {
    int64_t v = listing.complete.back().version;
    if (!newest_checkpoint->has_value() || **newest_checkpoint < v) {
      *newest_checkpoint = v;
    }
  }
  std::vector<CommitFile> out;
  int64_t next = version + 1;
  for (auto& [v, info] : listing.commits) {
    if (v != next) {
      return DataLoss("{}: the log is not contiguous: version {} is missing ({} follows {})",
                      log_dir, next, CommitFileName(v), CommitFileName(next - 1));
    }
    out.push_back(CommitFile{v, info});
    next++;
  }
  return out;
}

}  // namespace ferry::delta
