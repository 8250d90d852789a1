// The fake-gcs-server test server (ferry/testing/fake_gcs.h) and the Google Cloud Storage
// behaviour a GCS store would rely on, observed through curl against the emulator's JSON API:
// every upload path (media, multipart, resumable) with `ifGenerationMatch=0` answers 412 on an
// existing name and keeps the first object, and concurrent conditional uploads of one new name
// have exactly one winner whose bytes are stored; the XML API has no plain PUT (so no
// `x-goog-if-generation-match` to test); ranged reads; HEAD; downloads that ignore version
// conditions; resumable uploads in chunks; listing with prefix, startOffset and page tokens;
// deletes. And the server leaves nothing behind. Findings: docs/testing-servers.md.
#include "ferry/testing/fake_gcs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace ferry::testing {
namespace {

// Every string value of `"key":"..."` in a JSON text, in order (no escapes in our names).
std::vector<std::string> JsonStrings(std::string_view json, std::string_view key) {
  std::vector<std::string> values;
  const std::string needle = "\"" + std::string(key) + "\":\"";
  size_t at = 0;
  while ((at = json.find(needle, at)) != std::string_view::npos) {
    at += needle.size();
    size_t end = json.find('"', at);
    values.emplace_back(json.substr(at, end - at));
    at = end;
  }
  return values;
}

// The value of header `name` (lower case) in curl's dump of the answer's headers.
std::string Header(const std::string& headers, const std::string& name) {
  size_t at = 0;
  while (at < headers.size()) {
    size_t end = headers.find('\n', at);
    std::string line = headers.substr(at, end == std::string::npos ? end : end - at);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string key = line.substr(0, colon);
      for (char& c : key) {
        c = static_cast<char>(tolower(c));
      }
      if (key == name) {
        size_t value = line.find_first_not_of(' ', colon + 1);
        return value == std::string::npos ? "" : line.substr(value);
      }
    }
    if (end == std::string::npos) {
      break;
    }
    at = end + 1;
  }
  return "";
}

// An object name as a query value or a path segment ('/' as %2F; our names need nothing else).
std::string Encode(std::string_view name) {
  std::string out;
  for (char c : name) {
    out += c == '/' ? std::string("%2F") : std::string(1, c);
  }
  return out;
}

enum class UploadPath { kMedia, kMultipart, kResumable };

const char* Name(UploadPath path) {
  switch (path) {
    case UploadPath::kMedia:
      return "media";
    case UploadPath::kMultipart:
      return "multipart";
    case UploadPath::kResumable:
      return "resumable";
  }
  return "?";
}

class FakeGcsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<FakeGcs*> server = FakeGcs::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    gcs_ = *server;
    // GCS bucket names: lower case, at most 63 characters; one per test.
    static int next_bucket = 0;
    bucket_ = "bucket-" + std::to_string(next_bucket++);
    Status created = gcs_->CreateBucket(bucket_);
    ASSERT_TRUE(created.ok()) << created.ToString() << "\n" << gcs_->Log();
  }

  void ExpectAlive() { EXPECT_TRUE(gcs_->Alive()) << gcs_->Log(); }

  HttpReply Send(std::string_view method, const std::string& path_and_query,
                 const std::vector<std::string>& headers = {}, std::string_view body = "",
                 std::string* response_headers = nullptr) {
    Result<HttpReply> reply =
        gcs_->Request(method, path_and_query, headers, body, response_headers);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? *reply : HttpReply{};
  }

  // Starts a resumable upload of `name` with ifGenerationMatch=0; the session URI's path and
  // query (after the endpoint), or "" when the start was refused (its status in *status).
  std::string StartResumable(const std::string& name, int* status) {
    std::string headers;
    HttpReply reply = Send("POST",
                           "/upload/storage/v1/b/" + bucket_ +
                               "/o?uploadType=resumable&ifGenerationMatch=0&name=" + Encode(name),
                           {"Content-Type: application/json"}, "{}", &headers);
    *status = reply.status;
    std::string location = Header(headers, "location");
    if (location.rfind(gcs_->endpoint(), 0) != 0) {
      return "";
    }
    return location.substr(gcs_->endpoint().size());
  }

  // One upload of `body` to `name` (not encoded) with ifGenerationMatch=0 by `path`; the final
  // HTTP status.
  int ConditionalUpload(UploadPath path, const std::string& name, const std::string& body) {
    const std::string base = "/upload/storage/v1/b/" + bucket_ + "/o?ifGenerationMatch=0&";
    switch (path) {
      case UploadPath::kMedia:
        return Send("POST", base + "uploadType=media&name=" + Encode(name), {}, body).status;
      case UploadPath::kMultipart: {
        const std::string multipart =
            "--BOUNDARY\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"" +
            name + "\"}\r\n--BOUNDARY\r\nContent-Type: application/octet-stream\r\n\r\n" + body +
            "\r\n--BOUNDARY--\r\n";
        return Send("POST", base + "uploadType=multipart",
                    {"Content-Type: multipart/related; boundary=BOUNDARY"}, multipart)
            .status;
      }
      case UploadPath::kResumable: {
        int started = 0;
        std::string session = StartResumable(name, &started);
        if (session.empty()) {
          return started;
        }
        return Send("PUT", session, {}, body).status;
      }
    }
    return 0;
  }

  std::string Get(const std::string& name, int* status = nullptr,
                  const std::vector<std::string>& headers = {}) {
    HttpReply reply =
        Send("GET", "/storage/v1/b/" + bucket_ + "/o/" + Encode(name) + "?alt=media", headers);
    if (status != nullptr) {
      *status = reply.status;
    }
    return reply.body;
  }

  FakeGcs* gcs_ = nullptr;
  std::string bucket_;
};

TEST_F(FakeGcsTest, EveryUploadPathWithIfGenerationMatch0Answers412OnAnExistingNameAndKeepsIt) {
  for (UploadPath path : {UploadPath::kMedia, UploadPath::kMultipart, UploadPath::kResumable}) {
    const std::string name = std::string("t/_delta_log/") + Name(path) + ".json";
    EXPECT_EQ(ConditionalUpload(path, name, "first"), 200) << Name(path);
    EXPECT_EQ(ConditionalUpload(path, name, "second"), 412) << Name(path);
    int status = 0;
    EXPECT_EQ(Get(name, &status), "first") << Name(path);
    EXPECT_EQ(status, 200);
  }
  // Without the condition, an upload replaces the object: the 412 above is the precondition's.
  const std::string name = "t/_delta_log/media.json";
  EXPECT_EQ(
      Send("POST", "/upload/storage/v1/b/" + bucket_ + "/o?uploadType=media&name=" + Encode(name),
           {}, "x")
          .status,
      200);
  EXPECT_EQ(Get(name), "x");
  ExpectAlive();
}

// What the pinned emulator verifies of an upload's checksums (the GCS store relies on the first
// two): the crc32c (and md5Hash) of a multipart upload's metadata, and of a resumable upload's
// start, are checked against the bytes (400 `invalid`, nothing stored); a media upload's
// `x-goog-hash` and the one on a resumable upload's last chunk are ignored (real GCS checks them).
TEST_F(FakeGcsTest, ChecksumsInUploadMetadataAreVerifiedAndXGoogHashIsIgnored) {
  // "hello\n": crc32c NT3Yvg==, md5 sZRqySSS0jR8YjW00mERhA==.
  auto multipart = [&](const std::string& name, const std::string& extra) {
    const std::string body =
        "--B\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"" + name + "\"" +
        extra + "}\r\n--B\r\nContent-Type: application/octet-stream\r\n\r\nhello\n\r\n--B--\r\n";
    return Send("POST", "/upload/storage/v1/b/" + bucket_ + "/o?uploadType=multipart",
                {"Content-Type: multipart/related; boundary=B"}, body);
  };
  HttpReply bad_crc = multipart("bad-crc", ",\"crc32c\":\"AAAAAA==\"");
  EXPECT_EQ(bad_crc.status, 400) << bad_crc.body;
  EXPECT_NE(bad_crc.body.find("CRC32C"), std::string::npos) << bad_crc.body;
  EXPECT_EQ(multipart("bad-md5", ",\"md5Hash\":\"AAAAAAAAAAAAAAAAAAAAAA==\"").status, 400);
  HttpReply good = multipart("good", ",\"crc32c\":\"NT3Yvg==\"");
  EXPECT_EQ(good.status, 200) << good.body;
  int status = 0;
  Get("bad-crc", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(Get("good"), "hello\n");
  // A resumable upload whose start names a crc32c is refused when its bytes do not match.
  std::string headers;
  Send("POST", "/upload/storage/v1/b/" + bucket_ + "/o?uploadType=resumable&name=r",
       {"Content-Type: application/json"}, "{\"crc32c\":\"AAAAAA==\"}", &headers);
  const std::string location = Header(headers, "location");
  ASSERT_EQ(location.rfind(gcs_->endpoint(), 0), 0u) << headers;
  EXPECT_EQ(Send("PUT", location.substr(gcs_->endpoint().size()), {}, "hello\n").status, 400);
  // Ignored: x-goog-hash on a media upload.
  EXPECT_EQ(Send("POST", "/upload/storage/v1/b/" + bucket_ + "/o?uploadType=media&name=m",
                 {"x-goog-hash: crc32c=AAAAAA=="}, "hello\n")
                .status,
            200);
  EXPECT_EQ(Get("m"), "hello\n");
  ExpectAlive();
}

TEST_F(FakeGcsTest, AResumableUploadOfAnExistingNameStartsAndIsRefusedWhenItFinishes) {
  ASSERT_EQ(ConditionalUpload(UploadPath::kMedia, "taken", "first"), 200);
  int started = 0;
  std::string session = StartResumable("taken", &started);
  EXPECT_EQ(started, 200) << "the emulator checks the precondition when the upload finishes";
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(Send("PUT", session, {}, "second").status, 412);
  EXPECT_EQ(Get("taken"), "first");
}

TEST_F(FakeGcsTest, ConcurrentConditionalUploadsOfOneNewNameHaveExactlyOneWinner) {
  constexpr int kWriters = 8;
  constexpr int kRounds = 3;
  for (UploadPath path : {UploadPath::kMedia, UploadPath::kMultipart, UploadPath::kResumable}) {
    for (int round = 0; round < kRounds; ++round) {
      const std::string name = std::string("race-") + Name(path) + "-" + std::to_string(round);
      std::vector<int> statuses(kWriters, 0);
      std::vector<std::thread> writers;
      for (int w = 0; w < kWriters; ++w) {
        writers.emplace_back([&, w] {
          statuses[static_cast<size_t>(w)] =
              ConditionalUpload(path, name, "writer-" + std::to_string(w) + std::string(4096, 'w'));
        });
      }
      for (std::thread& t : writers) {
        t.join();
      }
      int winners = 0;
      int winner = -1;
      for (int w = 0; w < kWriters; ++w) {
        if (statuses[static_cast<size_t>(w)] == 200) {
          ++winners;
          winner = w;
        } else {
          EXPECT_EQ(statuses[static_cast<size_t>(w)], 412) << Name(path) << " writer " << w;
        }
      }
      ASSERT_EQ(winners, 1) << Name(path) << " round " << round;
      EXPECT_EQ(Get(name), "writer-" + std::to_string(winner) + std::string(4096, 'w'))
          << "the stored bytes are not the winner's (" << Name(path) << ")";
    }
  }
  ExpectAlive();
}

TEST_F(FakeGcsTest, XmlApiHasNoPlainPutSoNoGenerationHeaderToHonour) {
  // Path-style on the emulator's address: no such route.
  EXPECT_EQ(Send("PUT", "/" + bucket_ + "/x.json", {"x-goog-if-generation-match: 0"}, "x").status,
            404);
  // Virtual-host style, as storage.googleapis.com: routed to the JSON upload handler, which
  // wants an uploadType (400); only signed URLs and HTML form posts reach an XML upload.
  HttpReply reply =
      Send("PUT", "/x.json",
           {"Host: " + bucket_ + ".storage.googleapis.com", "x-goog-if-generation-match: 0"}, "x");
  EXPECT_EQ(reply.status, 400) << reply.body;
  int status = 0;
  Get("x.json", &status);
  EXPECT_EQ(status, 404);
}

TEST_F(FakeGcsTest, RangedReads) {
  ASSERT_EQ(ConditionalUpload(UploadPath::kMedia, "data.parquet", "0123456789"), 200);
  int status = 0;
  EXPECT_EQ(Get("data.parquet", &status, {"Range: bytes=2-5"}), "2345");
  EXPECT_EQ(status, 206);
  EXPECT_EQ(Get("data.parquet", &status, {"Range: bytes=7-"}), "789");
  EXPECT_EQ(status, 206);
  EXPECT_EQ(Get("data.parquet", &status, {"Range: bytes=-4"}), "6789");
  EXPECT_EQ(status, 206);
  // A range past the end: 416, as GCS answers.
  Get("data.parquet", &status, {"Range: bytes=10-20"});
  EXPECT_EQ(status, 416);
  // A range running past the end is cut at the end.
  EXPECT_EQ(Get("data.parquet", &status, {"Range: bytes=8-100"}), "89");
  EXPECT_EQ(status, 206);
}

TEST_F(FakeGcsTest, HeadGivesSizeTimeAndGenerationAndDownloadsIgnoreVersionConditions) {
  ASSERT_EQ(ConditionalUpload(UploadPath::kMedia, "v", "0123456789"), 200);
  std::string headers;
  EXPECT_EQ(Send("HEAD", "/storage/v1/b/" + bucket_ + "/o/v?alt=media", {}, "", &headers).status,
            200);
  EXPECT_EQ(Header(headers, "content-length"), "10") << headers;
  EXPECT_FALSE(Header(headers, "last-modified").empty()) << headers;
  EXPECT_FALSE(Header(headers, "etag").empty()) << headers;
  EXPECT_FALSE(Header(headers, "x-goog-generation").empty()) << headers;
  // A GCS download with ifGenerationMatch of another generation answers 412; the emulator
  // ignores it, and If-Match too: pinning reads to a version cannot be tested on it.
  HttpReply other_generation =
      Send("GET", "/storage/v1/b/" + bucket_ + "/o/v?alt=media&ifGenerationMatch=1",
           {"Range: bytes=0-3"});
  EXPECT_EQ(other_generation.status, 206);
  EXPECT_EQ(other_generation.body, "0123");
  int status = 0;
  EXPECT_EQ(Get("v", &status, {"Range: bytes=0-3", "If-Match: \"not-the-etag\""}), "0123");
  EXPECT_EQ(status, 206);
}

TEST_F(FakeGcsTest, AResumableUploadInChunksEndsWithAnEmptyPutNamingTheSize) {
  int started = 0;
  std::string session = StartResumable("chunked", &started);
  ASSERT_EQ(started, 200);
  ASSERT_FALSE(session.empty());
  std::string headers;
  // Each chunk but the last: 308 with the bytes received so far.
  EXPECT_EQ(Send("PUT", session, {"Content-Range: bytes 0-4/*"}, "abcde", &headers).status, 308);
  EXPECT_EQ(Header(headers, "range"), "bytes=0-4") << headers;
  EXPECT_EQ(Send("PUT", session, {"Content-Range: bytes 5-9/*"}, "fghij").status, 308);
  int status = 0;
  Get("chunked", &status);
  EXPECT_EQ(status, 404) << "an unfinished upload is invisible";
  // The size, once known, with no bytes: the object appears whole.
  EXPECT_EQ(Send("PUT", session, {"Content-Range: bytes */10"}, "").status, 200);
  EXPECT_EQ(Get("chunked"), "abcdefghij");
  // A session cancelled with DELETE answers 499, as GCS documents.
  std::string cancelled = StartResumable("cancelled", &started);
  ASSERT_FALSE(cancelled.empty());
  EXPECT_EQ(Send("DELETE", cancelled).status, 499);
}

TEST_F(FakeGcsTest, ListsWithPrefixStartOffsetAndPageTokens) {
  for (const char* name : {"a/1", "a/2", "a/3", "a/4", "a/5", "b/1"}) {
    ASSERT_EQ(ConditionalUpload(UploadPath::kMedia, name, "x"), 200) << name;
  }
  const std::string list = "/storage/v1/b/" + bucket_ + "/o?fields=items(name),nextPageToken&";
  HttpReply all = Send("GET", list + "prefix=a%2F");
  EXPECT_EQ(JsonStrings(all.body, "name"),
            (std::vector<std::string>{"a/1", "a/2", "a/3", "a/4", "a/5"}))
      << all.body;
  // startOffset is inclusive.
  HttpReply from = Send("GET", list + "prefix=a%2F&startOffset=a%2F3");
  EXPECT_EQ(JsonStrings(from.body, "name"), (std::vector<std::string>{"a/3", "a/4", "a/5"}))
      << from.body;
  // Pages of two, following nextPageToken until it is absent.
  std::vector<std::string> paged;
  std::string token;
  int pages = 0;
  do {
    HttpReply page = Send(
        "GET", list + "prefix=a%2F&maxResults=2" + (token.empty() ? "" : "&pageToken=" + token));
    ASSERT_EQ(page.status, 200) << page.body;
    std::vector<std::string> names = JsonStrings(page.body, "name");
    EXPECT_LE(names.size(), 2u);
    paged.insert(paged.end(), names.begin(), names.end());
    std::vector<std::string> next = JsonStrings(page.body, "nextPageToken");
    token = next.empty() ? "" : next.front();
    ASSERT_LT(++pages, 10) << "the pages do not end";
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(paged, (std::vector<std::string>{"a/1", "a/2", "a/3", "a/4", "a/5"}));
}

TEST_F(FakeGcsTest, DeleteRemovesAnObjectAndASecondDeleteAnswers404) {
  ASSERT_EQ(ConditionalUpload(UploadPath::kMedia, "gone", "x"), 200);
  // 200 with an empty body, where GCS documents 204: a store must take any 2xx.
  EXPECT_EQ(Send("DELETE", "/storage/v1/b/" + bucket_ + "/o/gone").status, 200);
  int status = 0;
  Get("gone", &status);
  EXPECT_EQ(status, 404);
  EXPECT_EQ(Send("DELETE", "/storage/v1/b/" + bucket_ + "/o/gone").status, 404);
  // A deleted name can be created again under the condition.
  EXPECT_EQ(ConditionalUpload(UploadPath::kMedia, "gone", "again"), 200);
  EXPECT_EQ(Get("gone"), "again");
}

TEST(FakeGcsLifetimeTest, StopLeavesNoProcessAndNoDirectory) {
  auto server = FakeGcs::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  pid_t pid = (*server)->pid();
  std::string dir = (*server)->dir();
  ASSERT_TRUE((*server)->Alive());
  ASSERT_TRUE((*server)->CreateBucket("lifetime").ok()) << (*server)->Log();
  EXPECT_EQ((*server)->CreateBucket("lifetime").code(), StatusCode::kAlreadyExists);
  server->reset();
  EXPECT_EQ(ProcessState(pid), "");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace ferry::testing
