// LeaseFollower: the elastic half of JetStreamSource (jetstream_source.h, "Elastic mode"). It
// compares the partitions the PartitionLeases say this process holds with those the source reads,
// and moves each one in or out: a partition no longer held is stopped (its subscription closed,
// its cursor forgotten) and revoked from the pipeline (OnRevoked) before anything else is
// delivered; a newly held one is assigned (OnAssigned: the table's position) and started. Then it
// tells the leases what the source reads (PartitionLeases::Confirm), so that a lease being handed
// over is deleted only after the pipeline let go of it.
//
// The order of one Follow() (why: docs/decisions/jetstream-leases.md, and the false DataLoss the
// elastic S3 test once caught):
//   1. Stop and revoke every partition read but no longer held; confirm.
//   2. For every partition held but not read: OnAssigned, then Partitions::PrepareReading (the
//   cursor at
//      the table's position + 1). All positions are read before the stream's state.
//   3. Partitions::StartReading reads the stream's state once and subscribes every prepared
//   partition;
//      confirm whatever the outcome.
//
// Thread-safety: one thread (the source's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/partition_leases.h"
#include "ferry/source/source.h"

namespace ferry::source::jetstream {

class LeaseFollower {
 public:
  // The source's side: its partitions, by index 0..partition_count()-1 (the leases' partition
  // numbers).
  class Partitions {
   public:
    virtual ~Partitions() = default;
    virtual size_t partition_count() const = 0;
    virtual const PartitionInfo& partition_info(size_t index) const = 0;
    // Assigned to this process and read (or about to be, once started).
    virtual bool reading(size_t index) const = 0;
    // Stops reading: closes the subscription and forgets the cursor (the next owner, or this
    // process later, starts from the table). Nothing of it is delivered afterwards.
    virtual void StopReading(size_t index) = 0;
    // Marks the partition read from `position` + 1 (nullopt: the start policy), to be subscribed
    // by StartReading() or, failing that, by the next Poll(). Internal: a negative position.
    virtual Status PrepareReading(size_t index, std::optional<int64_t> position) = 0;
    // Reads the stream's state once and subscribes each of `indexes` (PrepareReading()ed).
    virtual Status StartReading(const std::vector<size_t>& indexes) = 0;
  };

  // `partitions` must outlive the follower.
  LeaseFollower(std::shared_ptr<PartitionLeases> leases, Partitions* partitions);

  // Starts the leases (PartitionLeases::Start). Unavailable: no server (retry).
  Status StartLeases();
  // Per partition index 0..partitions-1: whether the leases say this process holds it now.
  std::vector<bool> Held(size_t partitions) const;
  // Steps 1-3 of the header. Errors: those of OnAssigned, PrepareReading and StartReading.
  Status Follow(PartitionListener* listener);
  // Tells the leases which partitions the source reads now.
  void Confirm();

 private:
  const std::shared_ptr<PartitionLeases> leases_;
  Partitions* const partitions_;
};

}  // namespace ferry::source::jetstream
