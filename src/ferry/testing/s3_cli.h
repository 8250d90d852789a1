// S3Cli: S3 clients that no one on this project wrote, for tests to set up a store and to check
// what ferry wrote to it independently of ferry's own HTTP client and signer: curl's built-in
// SigV4 signer (`--aws-sigv4`) for single requests, and the Debian awscli (/usr/bin/aws) for
// listings and downloads (`aws s3 sync`, e.g. a table's prefix for DuckDB to read).
// Path-style addressing, one endpoint (radosgw.h's server, or any S3-compatible one).
//
// Three traps of curl 7.88's signer are handled here (shared/FIELD-NOTES.md): the payload hash
// header must be sent by hand (UNSIGNED-PAYLOAD), a '/' in a query value must be sent
// percent-encoded (the caller does that), and the query must be sent sorted by name (curl signs
// it in the order given; Request sorts it).
//
// Thread-safety: const methods may be called from several threads at once (each runs its own
// process).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::testing {

// An HTTP answer as a command-line client saw it.
struct HttpReply {
  int status = 0;
  std::string body;
};

class S3Cli {
 public:
  struct Config {
    std::string endpoint;  // "http://127.0.0.1:PORT"
    std::string access_key;
    std::string secret_key;
    std::string region = "us-east-1";
    // Where request bodies are staged for curl (a directory the test owns).
    std::string scratch_dir = "/tmp";
    std::chrono::milliseconds timeout{300000};
  };

  explicit S3Cli(Config config) : config_(std::move(config)) {}

  // Creates a bucket. AlreadyExists when it exists (owned by anyone).
  Status CreateBucket(std::string_view bucket) const;

  // One request signed by curl, path-style: METHOD endpoint+path_and_query, with extra
  // "Name: value" headers and a body (sent for PUT and POST, even when empty). The caller
  // percent-encodes the query's values ('/' as %2F). Any HTTP status is a reply; an error only
  // when curl itself fails (connection refused: Unavailable).
  Result<HttpReply> Request(std::string_view method, std::string_view path_and_query,
                            const std::vector<std::string>& headers = {},
                            std::string_view body = "") const;

  // The environment that points the Debian awscli and boto3 at the endpoint: keys and region,
  // AWS_ENDPOINT_URL (for tools that read it; awscli 2.9 and Debian's boto3 do not, Aws() passes
  // --endpoint-url), no user config or credential files, no instance-metadata look-ups.
  std::vector<std::string> AwsEnv() const;
  // Runs `/usr/bin/aws ARGS... --endpoint-url ENDPOINT` with AwsEnv() and returns its stdout;
  // Unavailable with its output when it exits non-zero. NotFound when awscli is not installed.
  Result<std::string> Aws(const std::vector<std::string>& args) const;
  // Downloads every object under s3://bucket/prefix/ into `local_dir` (`aws s3 sync`), the key
  // below the prefix as the relative path. An empty prefix: the whole bucket.
  Status DownloadPrefix(std::string_view bucket, std::string_view prefix,
                        const std::string& local_dir) const;
  // The keys that start with `prefix`, sorted (`aws s3api list-objects-v2`, every page). Keys
  // holding tabs or newlines are not supported.
  Result<std::vector<std::string>> ListKeys(std::string_view bucket, std::string_view prefix) const;

  const Config& config() const { return config_; }

 private:
  const Config config_;
};

struct ProgramOutput;

// The reply of a curl run with `--output - --write-out "\n%{http_code}"` for `what` ("GET URL"):
// Unavailable when curl could not connect or timed out, Internal for another curl failure.
Result<HttpReply> CurlReply(const ProgramOutput& out, const std::string& what);

// The text between the first <tag> and its </tag> in an XML reply ("" when absent), and every
// such text in order; enough for tests to read S3 answers (no entities decoded).
std::string XmlText(std::string_view xml, std::string_view tag);
std::vector<std::string> XmlTexts(std::string_view xml, std::string_view tag);

}  // namespace ferry::testing
