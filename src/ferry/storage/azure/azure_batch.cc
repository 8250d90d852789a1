// DeleteMany of AzureBlobStore (azure_store.h): Blob Batch.
//
// A batch, numbered:
//   1. Each Delete Blob subrequest is authorized on its own, as if sent alone (x-ms-date and the
//      credential; no x-ms-version, the batch's applies), and written as an HTTP/1.1 request
//      line with its headers into a multipart/mixed body, Content-ID = its index.
//   2. POST <container>?restype=container&comp=batch, itself authorized; up to 256 subrequests.
//   3. The 202 answer is a multipart/mixed body of one HTTP response per Content-ID: 202 (deleted)
//      and 404 (already gone) are success. Any blob without such an answer is deleted alone.
//   4. An account that refuses the batch as a whole (a 4xx other than 404: some accounts with a
//      hierarchical namespace) is remembered, and its deletes are single Delete Blob calls,
//      eight at a time.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <future>
#include <map>
#include <random>

#include "ferry/base/log.h"
#include "ferry/http/header_values.h"
#include "ferry/storage/azure/azure_internal.h"

namespace ferry::storage::azure {
namespace {

constexpr size_t kBatchSize = 256;
constexpr size_t kParallelDeletes = 8;

std::string RandomBoundary() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("batch_{:016x}{:016x}", rng(), rng());
}

Status DeleteOne(const AzureCore& core, const std::string& blob) {
  http::HttpOutcome r = core.Send(HttpCall{.method = "DELETE", .object = blob});
  if (r.ok() || r.status_code() == 404) {
    return Status::OK();
  }
  return AzureError(r, "DELETE " + core.DescribeBlob(blob));
}

// Deletes `blobs` one by one, kParallelDeletes at a time; the first error.
Status DeleteSingly(const AzureCore& core, const std::vector<std::string>& blobs) {
  for (size_t start = 0; start < blobs.size(); start += kParallelDeletes) {
    const size_t end = std::min(blobs.size(), start + kParallelDeletes);
    std::vector<std::future<Status>> running;
    for (size_t i = start; i < end; ++i) {
      running.push_back(std::async(std::launch::async,
                                   [&core, &blob = blobs[i]] { return DeleteOne(core, blob); }));
    }
    Status first;
    for (std::future<Status>& f : running) {
      Status st = f.get();
      if (first.ok() && !st.ok()) {
        first = st;
      }
    }
    FERRY_RETURN_IF_ERROR(first);
  }
  return Status::OK();
}

// The boundary parameter of a multipart Content-Type, "" when absent.
std::string Boundary(std::string_view content_type) {
  size_t at = content_type.find("boundary=");
  if (at == std::string_view::npos) {
    return "";
  }
  std::string_view b = content_type.substr(at + 9);
  b = b.substr(0, b.find(';'));
  if (b.size() >= 2 && b.front() == '"' && b.back() == '"') {
    b = b.substr(1, b.size() - 2);
  }
  return std::string(b);
}

// Content-ID -> the HTTP status of each sub-response of a batch answer.
std::map<size_t, int> SubResponseStatuses(std::string_view body, std::string_view boundary) {
  std::map<size_t, int> out;
  const std::string delimiter = "--" + std::string(boundary);
  size_t pos = body.find(delimiter);
  while (pos != std::string_view::npos) {
    size_t next = body.find(delimiter, pos + delimiter.size());
    std::string_view part = body.substr(
        pos + delimiter.size(),
        next == std::string_view::npos ? std::string_view::npos : next - pos - delimiter.size());
    std::optional<size_t> id;
    int status = 0;
    size_t line_start = 0;
    while (line_start < part.size()) {
      size_t line_end = part.find('\n', line_start);
      std::string_view line =
          part.substr(line_start, line_end == std::string_view::npos ? std::string_view::npos
                                                                     : line_end - line_start);
      if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
      }
      if (http::EqualsIgnoreCase(line.substr(0, 11), "Content-ID:")) {
        std::string_view v = line.substr(11);
        while (!v.empty() && v.front() == ' ') {
          v.remove_prefix(1);
        }
        size_t n = 0;
        if (std::from_chars(v.data(), v.data() + v.size(), n).ec == std::errc()) {
          id = n;
        }
      } else if (line.starts_with("HTTP/1.1 ") && status == 0) {
        std::string_view code = line.substr(9, 3);
        std::from_chars(code.data(), code.data() + code.size(), status);
      }
      if (line_end == std::string_view::npos) {
        break;
      }
      line_start = line_end + 1;
    }
    if (id && status != 0) {
      out[*id] = status;
    }
    pos = next;
  }
  return out;
}

// Steps 1-3 for one batch. Returns the blobs the batch did not delete; `refused` says the
// service refused the batch as a whole (step 4).
Result<std::vector<std::string>> DeleteBatch(const AzureCore& core,
                                             const std::vector<std::string>& blobs, bool* refused) {
  const std::string boundary = RandomBoundary();
  const http::Deadline deadline = http::DeadlineAfter(core.options.transfer.request_timeout);
  std::string body;
  for (size_t i = 0; i < blobs.size(); ++i) {
    http::HttpRequest sub;
    sub.method = "DELETE";
    sub.url = core.BlobUrl(blobs[i]);
    FERRY_RETURN_IF_ERROR(core.Authorize(&sub, deadline, /*batch_subrequest=*/true));
    FERRY_ASSIGN_OR_RETURN(http::Url url, http::ParseUrl(sub.url));
    body += fmt::format(
        "--{}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
        "Content-ID: {}\r\n\r\nDELETE {}{}{} HTTP/1.1\r\n",
        boundary, i, url.path, url.query.empty() ? "" : "?", url.query);
    for (const auto& [name, value] : sub.headers.fields()) {
      body += fmt::format("{}: {}\r\n", name, value);
    }
    body += "Content-Length: 0\r\n\r\n";
  }
  body += fmt::format("--{}--\r\n", boundary);
  HttpCall call{
      .method = "POST", .query = {{"restype", "container"}, {"comp", "batch"}}, .body = body};
  call.headers.Set("Content-Type", "multipart/mixed; boundary=" + boundary);
  http::HttpOutcome r = core.Send(call);
  const std::string what =
      fmt::format("batch delete of {} blobs in {}", blobs.size(), core.DescribeBlob(""));
  if (!r.ok()) {
    const int code = r.status_code();
    if (code >= 400 && code < 500 && code != 404 && code != 429) {
      FERRY_LOG_INFO("{}: refused ({}); deleting one blob at a time from now on", what,
                     r.status.message());
      *refused = true;
      return blobs;
    }
    return AzureError(r, what);
  }
  std::map<size_t, int> statuses =
      SubResponseStatuses(r.response.body, Boundary(r.response.headers.GetOr("Content-Type")));
  std::vector<std::string> left;
  for (size_t i = 0; i < blobs.size(); ++i) {
    auto it = statuses.find(i);
    if (it == statuses.end() || (it->second != 202 && it->second != 200 && it->second != 404)) {
      left.push_back(blobs[i]);
    }
  }
  return left;
}

}  // namespace

Status DeleteBlobs(const AzureCore& core, const std::vector<std::string>& blobs) {
  for (size_t start = 0; start < blobs.size(); start += kBatchSize) {
    std::vector<std::string> chunk(
        blobs.begin() + static_cast<std::ptrdiff_t>(start),
        blobs.begin() + static_cast<std::ptrdiff_t>(std::min(blobs.size(), start + kBatchSize)));
    if (core.batch_refused.load() || chunk.size() == 1) {
      FERRY_RETURN_IF_ERROR(DeleteSingly(core, chunk));
      continue;
    }
    bool refused = false;
    FERRY_ASSIGN_OR_RETURN(std::vector<std::string> left, DeleteBatch(core, chunk, &refused));
    if (refused) {
      core.batch_refused.store(true);
    }
    // What the batch left (a subrequest that failed): one by one, with their own errors.
    FERRY_RETURN_IF_ERROR(DeleteSingly(core, left));
  }
  return Status::OK();
}

}  // namespace ferry::storage::azure
