// LocalStore: an ObjectStore on a local POSIX file system. A key is a path below the root
// directory; "directories" are created on demand, as object stores have none.
//
// Put-if-absent (the Delta commit primitive), numbered as the code does it:
//   1. create the parent directories (fsync'ing the parent of each one created);
//   2. write the bytes to a temporary file `.ferry-tmp-<random>-<name>` in the target directory;
//   3. fsync the temporary file;                      failpoints storage.local.before_fsync,
//                                                     storage.local.after_fsync
//   4. link(2) it to the final name: EEXIST means another writer won (AlreadyExists); link
//      never replaces, so exactly one of several racing processes succeeds;
//                                                     storage.local.before_link,
//                                                     storage.local.after_link
//   5. unlink the temporary name and fsync the directory, making the new entry durable.
// Put and the atomic writer do the same with rename(2) (replace) in step 4
// (storage.local.before_rename, storage.local.after_rename).
//
// A crash leaves at most a temporary file; List never shows names starting with ".ferry-tmp-".
// Needs a file system with hard links (ext4, xfs, btrfs, tmpfs; not most FUSE/SMB mounts).
//
// Thread-safety: thread-safe; safe across processes sharing the directory.
#pragma once

#include <memory>
#include <string>

#include "ferry/storage/object_store.h"

namespace ferry::storage {

struct LocalStoreOptions {
  // fsync files and directories. Off only for throwaway test data where speed matters more than
  // durability; every commit path of ferry itself runs with it on.
  bool sync = true;
};

class LocalStore final : public ObjectStore {
 public:
  // `root` must exist and be a directory. InvalidArgument otherwise.
  static Result<std::unique_ptr<LocalStore>> Create(const std::string& root,
                                                    LocalStoreOptions options = {});

  using ObjectStore::List;
  Result<std::vector<ObjectInfo>> List(std::string_view prefix,
                                       const ListOptions& options) override;
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override;
  Result<ObjectInfo> Stat(std::string_view key) override;
  Status PutIfAbsent(std::string_view key, std::string_view data) override;
  Status Put(std::string_view key, std::string_view data) override;
  Status Delete(std::string_view key) override;
  Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) override;
  // The absolute path of `key`.
  std::string Describe(std::string_view key) const override;

  const std::string& root() const { return root_; }

  // The prefix of temporary names; exposed for tests.
  static constexpr std::string_view kTempPrefix = ".ferry-tmp-";

 private:
  LocalStore(std::string root, LocalStoreOptions options)
      : root_(std::move(root)), options_(options) {}

  std::string root_;
  LocalStoreOptions options_;
};

}  // namespace ferry::storage
