#include "ferry/source/jetstream/lease_follower.h"

#include <set>
#include <utility>

#include "ferry/base/log.h"

namespace ferry::source::jetstream {

LeaseFollower::LeaseFollower(std::shared_ptr<PartitionLeases> leases, Partitions* partitions)
    : leases_(std::move(leases)), partitions_(partitions) {}

Status LeaseFollower::StartLeases() {
  return leases_->Start();
}

std::vector<bool> LeaseFollower::Held(size_t partitions) const {
  std::vector<bool> held(partitions, false);
  for (int p : leases_->Owned()) {
    if (p >= 0 && static_cast<size_t>(p) < held.size()) {
      held[static_cast<size_t>(p)] = true;
    }
  }
  return held;
}

void LeaseFollower::Confirm() {
  std::set<int> reading;
  for (size_t i = 0; i < partitions_->partition_count(); ++i) {
    if (partitions_->reading(i)) {
      reading.insert(static_cast<int>(i));
    }
  }
  leases_->Confirm(reading);
}

Status LeaseFollower::Follow(PartitionListener* listener) {
  const std::vector<bool> held = Held(partitions_->partition_count());
  bool any_new = false;
  for (size_t i = 0; i < partitions_->partition_count(); ++i) {
    if (partitions_->reading(i) && !held[i]) {
      // Nothing of it is delivered after OnRevoked; the next owner starts from the table.
      partitions_->StopReading(i);
      listener->OnRevoked(partitions_->partition_info(i));
      FERRY_LOG_INFO("{}: no longer leased to this process; stopped reading it",
                     partitions_->partition_info(i).key);
    }
    any_new = any_new || (held[i] && !partitions_->reading(i));
  }
  Confirm();
  if (!any_new) {
    return Status::OK();
  }
  // The table's positions first, the stream's state after: a position another process has just
  // committed (a handover) is then never past the last sequence read, however long this process
  // was held between the two reads (paused, a slow table). Read the other way round, a process
  // SIGSTOPped between them took a fresh position for a stream that had "lost" messages and
  // stopped with a false DataLoss (the elastic S3 test saw it).
  std::vector<size_t> assigned;
  for (size_t i = 0; i < partitions_->partition_count(); ++i) {
    if (partitions_->reading(i) || !held[i]) {
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(std::optional<int64_t> position,
                           listener->OnAssigned(partitions_->partition_info(i)));
    FERRY_RETURN_IF_ERROR(partitions_->PrepareReading(i, position));
    assigned.push_back(i);
  }
  Status started = partitions_->StartReading(assigned);
  Confirm();
  return started;
}

}  // namespace ferry::source::jetstream
