// TableUri: where a Delta table lives, parsed from what a user writes as `table = ...` in the
// configuration or as a table argument on the command line. A plain path or `file://` URI names
// a local directory; every other scheme must be one this build serves, or the table is refused
// with the scheme named (an `hdfs://` table is never taken for a relative local directory
// `hdfs:/...`).
//
//   /data/delta/events, ./events, events      local path (relative to the working directory)
//   file:///data/delta/events                  local path, absolute (file://localhost/... too)
//   s3://bucket/prefix/events                  S3 or an S3-compatible store (storage/s3/)
//   s3a://bucket/prefix/events                 the same, as Spark's Hadoop connector writes it
//   az://container/prefix/events               Azure Blob Storage or ADLS Gen2 (storage/azure/);
//   azure://container/prefix/events            the account from the storage options
//   abfss://container@account.dfs.core.windows.net/prefix/events
//                                              the same, as Spark and Databricks write it (also
//                                              abfs://, and az://container@account.<host>/...)
//   https://account.blob.core.windows.net/container/prefix/events
//                                              the same, as a Blob (or .dfs.) endpoint URL
//   gs://bucket/prefix/events                  Google Cloud Storage (storage/gcs/)
//
// Azure locations always reach the account through its Blob endpoint (account.blob.<suffix>),
// also when written with the ADLS Gen2 (dfs) host, as delta-rs does.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>

#include "ferry/base/result.h"

namespace ferry::storage {

enum class StoreKind { kLocal, kS3, kAzure, kGcs };

struct TableUri {
  StoreKind kind = StoreKind::kLocal;
  // The text as the user wrote it (for messages).
  std::string original;
  // The scheme as written, lower-cased ("" for a plain path).
  std::string scheme;
  // kLocal: the directory, with `file://` removed and trailing slashes trimmed.
  std::string path;
  // kS3, kGcs: the bucket; kAzure: the container. And the table's key (blob name) prefix inside it
  // (no leading or trailing '/').
  std::string bucket;
  std::string key_prefix;
  // kAzure: the storage account, "" when the location does not name it (az://container/...);
  // and the account's Blob endpoint host ("account.blob.core.windows.net"), "" likewise.
  std::string account;
  std::string host;

  // The location in one canonical spelling (s3a:// as s3://, no trailing slash; an Azure location
  // that names its account as https://account.blob.<suffix>/container/prefix), to tell that two
  // spellings name one table.
  std::string Canonical() const;
};

// Parses a table location. InvalidArgument, naming the text and the scheme, for an empty
// location, an unsupported scheme (the message lists the supported ones), or a malformed URI of
// a supported scheme. `what` names the setting in messages ("table", "dead_letter_table").
Result<TableUri> ParseTableUri(std::string_view text, std::string_view what = "table");

// The schemes this build serves, for messages: "file:// (or a plain path)".
std::string SupportedTableSchemes();

// A sibling location: the same store, the last path segment followed by `suffix`
// ("s3://b/t" + "_dead_letter" -> "s3://b/t_dead_letter"). REQUIRES: a parsed location.
std::string SiblingLocation(std::string_view location, std::string_view suffix);

}  // namespace ferry::storage
