#include "ferry/testing/s3_cli.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>

#include "ferry/testing/subprocess.h"

namespace ferry::testing {
namespace {

constexpr char kAws[] = "/usr/bin/aws";  // the Debian awscli, not a pip/pyenv one on PATH
constexpr char kCurlHint[] = "Debian package curl; `make setup` installs it";

std::atomic<int> body_counter{0};

// curl's exit codes for "nothing listens there" and "timed out".
bool Unreachable(int curl_exit) {
  return curl_exit == 7 || curl_exit == 28;
}

// path?b=1&a=2 -> path?a=2&b=1: curl 7.88 signs the query in the order given, but SigV4's
// canonical query is sorted by name, so an unsorted query fails with SignatureDoesNotMatch.
std::string SortQuery(std::string_view path_and_query) {
  size_t mark = path_and_query.find('?');
  if (mark == std::string_view::npos) {
    return std::string(path_and_query);
  }
  std::vector<std::string> params;
  std::string_view query = path_and_query.substr(mark + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    params.emplace_back(query.substr(0, amp));
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
  }
  std::sort(params.begin(), params.end());
  std::string out(path_and_query.substr(0, mark + 1));
  for (size_t i = 0; i < params.size(); ++i) {
    out += (i == 0 ? "" : "&") + params[i];
  }
  return out;
}

}  // namespace

Status S3Cli::CreateBucket(std::string_view bucket) const {
  FERRY_ASSIGN_OR_RETURN(HttpReply reply, Request("PUT", "/" + std::string(bucket)));
  if (reply.status == 200) {
    return Status::OK();
  }
  if (reply.status == 409) {
    return AlreadyExists("bucket {} at {}: {}", bucket, config_.endpoint, reply.body);
  }
  return Unavailable("create bucket {} at {}: HTTP {}: {}", bucket, config_.endpoint, reply.status,
                     reply.body);
}

Result<HttpReply> S3Cli::Request(std::string_view method, std::string_view path_and_query,
                                 const std::vector<std::string>& headers,
                                 std::string_view body) const {
  FERRY_ASSIGN_OR_RETURN(std::string curl, FindProgram("curl", {"/usr/bin/curl"}, kCurlHint));
  std::vector<std::string> argv = {curl,
                                   "--silent",
                                   "--show-error",
                                   "--max-time",
                                   std::to_string(config_.timeout.count() / 1000),
                                   "--aws-sigv4",
                                   "aws:amz:" + config_.region + ":s3",
                                   "--user",
                                   config_.access_key + ":" + config_.secret_key,
                                   "--header",
                                   "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                                   "--output",
                                   "-",
                                   "--write-out",
                                   "\n%{http_code}"};
  if (method == "HEAD") {
    argv.push_back("--head");
  } else {
    argv.push_back("--request");
    argv.emplace_back(method);
  }
  for (const std::string& header : headers) {
    argv.push_back("--header");
    argv.push_back(header);
  }
  std::string body_path;
  if (method == "PUT" || method == "POST") {
    body_path = config_.scratch_dir + "/s3cli-body-" + std::to_string(getpid()) + "-" +
                std::to_string(body_counter.fetch_add(1));
    std::ofstream out(body_path, std::ios::binary);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.close();
    if (!out) {
      return IOError("write {}", body_path);
    }
    argv.push_back("--header");
    argv.push_back("Content-Type: application/octet-stream");
    argv.push_back("--data-binary");
    argv.push_back("@" + body_path);
  }
  argv.push_back(config_.endpoint + SortQuery(path_and_query));
  Result<ProgramOutput> out = RunProgram(argv, config_.timeout + std::chrono::seconds(5));
  if (!body_path.empty()) {
    unlink(body_path.c_str());
  }
  if (!out.ok()) {
    return out.status();
  }
  return CurlReply(*out,
                   std::string(method) + " " + config_.endpoint + std::string(path_and_query));
}

Result<HttpReply> CurlReply(const ProgramOutput& out, const std::string& what) {
  if (out.exit_code != 0) {
    std::string message = fmt::format("curl {}: exit code {}: {}", what, out.exit_code, out.err);
    return Unreachable(out.exit_code) ? Unavailable(message) : Internal(message);
  }
  size_t newline = out.out.rfind('\n');
  if (newline == std::string::npos) {
    return Internal("curl {}: no status code in its output", what);
  }
  HttpReply reply;
  reply.status = atoi(out.out.c_str() + newline + 1);
  reply.body = out.out.substr(0, newline);
  return reply;
}

std::vector<std::string> S3Cli::AwsEnv() const {
  return {"AWS_ACCESS_KEY_ID=" + config_.access_key,
          "AWS_SECRET_ACCESS_KEY=" + config_.secret_key,
          "AWS_REGION=" + config_.region,
          "AWS_DEFAULT_REGION=" + config_.region,
          "AWS_ENDPOINT_URL=" + config_.endpoint,
          "AWS_CONFIG_FILE=/dev/null",
          "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
          "AWS_EC2_METADATA_DISABLED=true",
          "AWS_PAGER=",
          "AWS_SESSION_TOKEN",
          "AWS_PROFILE",
          "AWS_DEFAULT_PROFILE",
          "AWS_CA_BUNDLE"};
}

Result<std::string> S3Cli::Aws(const std::vector<std::string>& args) const {
  if (access(kAws, X_OK) != 0) {
    return NotFound("{} not found (Debian package awscli; `make setup` installs it)", kAws);
  }
  std::vector<std::string> argv = {kAws};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--endpoint-url");
  argv.push_back(config_.endpoint);
  ProgramOptions options;
  options.env = AwsEnv();
  FERRY_ASSIGN_OR_RETURN(ProgramOutput out, RunProgram(argv, config_.timeout, options));
  if (out.exit_code != 0) {
    std::string command = "aws";
    for (const std::string& arg : args) {
      command += " " + arg;
    }
    return Unavailable("{} (endpoint {}) exited with {}: {}{}", command, config_.endpoint,
                       out.exit_code, out.err, out.out);
  }
  return out.out;
}

Status S3Cli::DownloadPrefix(std::string_view bucket, std::string_view prefix,
                             const std::string& local_dir) const {
  std::string source = "s3://" + std::string(bucket) + "/" + std::string(prefix);
  return Aws({"s3", "sync", source, local_dir, "--no-progress", "--only-show-errors"}).status();
}

Result<std::vector<std::string>> S3Cli::ListKeys(std::string_view bucket,
                                                 std::string_view prefix) const {
  FERRY_ASSIGN_OR_RETURN(
      std::string text,
      Aws({"s3api", "list-objects-v2", "--bucket", std::string(bucket), "--prefix",
           std::string(prefix), "--query", "Contents[].Key", "--output", "text"}));
  // One line per page, keys separated by tabs; "None" for an empty listing.
  std::vector<std::string> keys;
  std::string key;
  for (char c : text + "\n") {
    if (c == '\t' || c == '\n') {
      if (!key.empty() && key != "None") {
        keys.push_back(key);
      }
      key.clear();
    } else {
      key.push_back(c);
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string XmlText(std::string_view xml, std::string_view tag) {
  std::vector<std::string> texts = XmlTexts(xml, tag);
  return texts.empty() ? "" : texts.front();
}

std::vector<std::string> XmlTexts(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  std::vector<std::string> texts;
  size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string_view::npos) {
    size_t start = pos + open.size();
    size_t end = xml.find(close, start);
    if (end == std::string_view::npos) {
      break;
    }
    texts.emplace_back(xml.substr(start, end - start));
    pos = end + close.size();
  }
  return texts;
}

}  // namespace ferry::testing
