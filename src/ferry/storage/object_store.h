// ObjectStore: the storage layer's one interface. A flat namespace of immutable-ish objects named
// by keys ("sales/_delta_log/00000000000000000007.json"), as S3, GCS and ADLS offer them, with
// the one primitive Delta's optimistic commits need: an atomic put-if-absent.
//
// Implementations: LocalStore (local_store.h, a directory on a POSIX file system),
// InMemoryStore (memory_store.h, tests and benchmarks), testing::FaultInjectingStore (wraps
// another store and injects errors and crashes). An S3-compatible store with conditional writes
// (`If-None-Match: *` on PUT and CompleteMultipartUpload) fits this interface unchanged; delta/
// only ever talks to ObjectStore.
//
// Keys: relative, '/'-separated, no empty segment, no "." or ".." segment, no NUL. Keys are
// compared bytewise; List returns them sorted that way (which orders Delta's zero-padded version
// files by version).
//
// Durability contract: when PutIfAbsent, Put or an atomic writer's Close returns OK, the object
// is durable and visible to every later call (read-after-write consistency). When one of them
// returns an error other than AlreadyExists, the outcome is unknown: the object may or may not
// have been written (a crash or timeout after the store applied it). Callers that must know
// (the Delta commit) read the object back and compare.
//
// Thread-safety: every method of every implementation is thread-safe. A writer returned by
// OpenAtomicWriter is used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::storage {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  // Last modification, milliseconds since the Unix epoch (Delta's add.modificationTime).
  int64_t modification_time_ms = 0;
};

struct ListOptions {
  // false: like a directory listing (S3 delimiter '/'): only keys with no '/' after the prefix's
  // last '/'. true: every key under the prefix, at any depth.
  bool recursive = false;
  // Only keys greater than this one (S3's StartAfter): lets a reader that knows a recent
  // checkpoint skip the older part of a long log. Empty = from the start.
  std::string start_after;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Objects whose key starts with `prefix`, sorted by key. A prefix that matches nothing (a
  // missing "directory") gives an empty list, not NotFound.
  virtual Result<std::vector<ObjectInfo>> List(std::string_view prefix,
                                               const ListOptions& options) = 0;
  Result<std::vector<ObjectInfo>> List(std::string_view prefix) { return List(prefix, {}); }

  // Opens an object for reading whole or by range. NotFound if it does not exist. The file
  // reads the version that existed at open, never a mix of two: a local file stays readable
  // even if the object is replaced or deleted afterwards; an S3 file (which keeps the first
  // 64 KiB it read at open) fails later reads with DataLoss instead.
  virtual Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) = 0;

  // NotFound if the object does not exist.
  virtual Result<ObjectInfo> Stat(std::string_view key) = 0;

  // Creates `key` holding `data` unless it exists. Exactly one of several concurrent callers
  // for one key gets OK; every other gets AlreadyExists and the object keeps the winner's bytes.
  virtual Status PutIfAbsent(std::string_view key, std::string_view data) = 0;

  // Creates or atomically replaces `key`: readers see the old bytes or the new, never a mix.
  virtual Status Put(std::string_view key, std::string_view data) = 0;

  // Removes `key`. OK if it did not exist (as on S3).
  virtual Status Delete(std::string_view key) = 0;

  // Removes every key of `keys`, in batches where the store has a batch call (S3 DeleteObjects:
  // 1000 a request); the order within a batch is the store's. OK for keys that did not exist.
  // On an error some keys may be gone and others not. The default deletes one by one, in order.
  virtual Status DeleteMany(const std::vector<std::string>& keys);

  // A stream whose bytes become the object `key` on Close(), atomically (as Put: replaces an
  // existing object). Until Close() returns OK nothing is visible under `key`; a writer
  // destroyed without Close() leaves nothing behind (a crash may leave an invisible temporary
  // that List never shows). For large data files: the bytes are not held in memory.
  virtual Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) = 0;

  // Where `key` lives, for error messages and for handing to other readers: an absolute local
  // path, "memory://key", later "s3://bucket/key".
  virtual std::string Describe(std::string_view key) const = 0;

  // Convenience wrappers over OpenForRead.
  Result<std::string> Read(std::string_view key);
  Result<std::string> ReadRange(std::string_view key, uint64_t offset, uint64_t length);
};

// InvalidArgument unless `key` is a valid object key (see above).
Status ValidateKey(std::string_view key);
// InvalidArgument unless `prefix` is a valid listing prefix: "" or a key, optionally ending
// with '/'.
Status ValidatePrefix(std::string_view prefix);

// Joins key segments with '/', ignoring empty parts: JoinKey("t", "_delta_log/0.json").
std::string JoinKey(std::string_view a, std::string_view b);

}  // namespace ferry::storage
