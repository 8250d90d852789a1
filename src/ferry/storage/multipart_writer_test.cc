// The store-neutral multipart writer (multipart_writer.h) over a fake upload that records its
// calls: a small file is one PutWhole; a large one goes up in parts, in order, never more in
// flight than allowed; a failure or an abandoned writer aborts once, a completed one never.
#include "ferry/storage/multipart_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

namespace ferry::storage {
namespace {

struct Record {
  std::mutex mu;
  std::string whole;
  bool put_whole = false;
  int starts = 0;
  std::map<int, std::string> parts;  // number -> bytes
  std::vector<UploadedPart> completed;
  uint64_t completed_size = 0;
  int aborts = 0;
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  int fail_part = 0;  // UploadPart of this number fails
  bool fail_complete = false;
};

class FakeUpload final : public MultipartUpload {
 public:
  explicit FakeUpload(Record* r) : r_(r) {}
  Status PutWhole(std::string_view data) override {
    std::lock_guard lock(r_->mu);
    r_->put_whole = true;
    r_->whole = std::string(data);
    return Status::OK();
  }
  Status Start() override {
    std::lock_guard lock(r_->mu);
    ++r_->starts;
    return Status::OK();
  }
  Result<std::string> UploadPart(int number, std::string_view data) override {
    int now = ++r_->in_flight;
    int seen = r_->max_in_flight.load();
    while (now > seen && !r_->max_in_flight.compare_exchange_weak(seen, now)) {
    }
    // Keep the part in flight a while, so that the writer has to wait for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --r_->in_flight;
    std::lock_guard lock(r_->mu);
    if (number == r_->fail_part) {
      return Unavailable("part {} refused", number);
    }
    r_->parts[number] = std::string(data);
    return "token-" + std::to_string(number);
  }
  Status Complete(const std::vector<UploadedPart>& parts, uint64_t total_size) override {
    std::lock_guard lock(r_->mu);
    if (r_->fail_complete) {
      return Unavailable("complete refused");
    }
    r_->completed = parts;
    r_->completed_size = total_size;
    return Status::OK();
  }
  void Abort() override {
    std::lock_guard lock(r_->mu);
    ++r_->aborts;
  }

 private:
  Record* r_;
};

std::unique_ptr<OutputStream> Writer(Record* r, size_t part_size, int in_flight) {
  return NewMultipartWriter(std::make_unique<FakeUpload>(r), "fake://object",
                            {.part_size = part_size, .parts_in_flight = in_flight});
}

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>('a' + i % 26);
  }
  return s;
}

TEST(MultipartWriterTest, ASmallFileIsOneRequest) {
  Record r;
  auto w = Writer(&r, 100, 2);
  ASSERT_TRUE(w->Append("hello ").ok());
  ASSERT_TRUE(w->Append("world").ok());
  EXPECT_EQ(w->Tell(), 11u);
  EXPECT_EQ(w->name(), "fake://object");
  ASSERT_TRUE(w->Close().ok());
  EXPECT_TRUE(r.put_whole);
  EXPECT_EQ(r.whole, "hello world");
  EXPECT_EQ(r.starts, 0);
  EXPECT_EQ(r.aborts, 0);
  EXPECT_EQ(w->Append("x").code(), StatusCode::kInternal);
}

TEST(MultipartWriterTest, ALargeFileGoesUpInOrderedPartsWithBoundedConcurrency) {
  Record r;
  const std::string data = Bytes(1050);
  auto w = Writer(&r, 100, 3);
  // Odd-sized appends, so that parts straddle them.
  for (size_t at = 0; at < data.size(); at += 37) {
    ASSERT_TRUE(w->Append(std::string_view(data).substr(at, 37)).ok());
  }
  ASSERT_TRUE(w->Close().ok());
  EXPECT_FALSE(r.put_whole);
  EXPECT_EQ(r.starts, 1);
  ASSERT_EQ(r.completed.size(), 11u);
  std::string joined;
  for (size_t i = 0; i < r.completed.size(); ++i) {
    EXPECT_EQ(r.completed[i].number, static_cast<int>(i + 1));
    EXPECT_EQ(r.completed[i].token, "token-" + std::to_string(i + 1));
    EXPECT_EQ(r.completed[i].size, i < 10 ? 100u : 50u);
    joined += r.parts[static_cast<int>(i + 1)];
  }
  EXPECT_EQ(joined, data);
  EXPECT_EQ(r.completed_size, data.size());
  EXPECT_LE(r.max_in_flight.load(), 3);
  EXPECT_EQ(r.aborts, 0);
}

TEST(MultipartWriterTest, AFailedPartFailsTheWriterAndAbortsOnce) {
  Record r;
  r.fail_part = 2;
  auto w = Writer(&r, 10, 1);
  Status st;
  for (int i = 0; i < 10 && st.ok(); ++i) {
    st = w->Append(Bytes(10));
  }
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_EQ(w->Close().code(), StatusCode::kUnavailable);
  EXPECT_EQ(w->Close().code(), StatusCode::kUnavailable);
  w.reset();
  EXPECT_EQ(r.aborts, 1);
  EXPECT_TRUE(r.completed.empty());
}

TEST(MultipartWriterTest, AFailedCompleteAborts) {
  Record r;
  r.fail_complete = true;
  auto w = Writer(&r, 10, 2);
  ASSERT_TRUE(w->Append(Bytes(25)).ok());
  EXPECT_FALSE(w->Close().ok());
  EXPECT_EQ(r.aborts, 1);
}

TEST(MultipartWriterTest, AnAbandonedWriterAbortsAfterItsPartsSettle) {
  Record r;
  {
    auto w = Writer(&r, 10, 4);
    ASSERT_TRUE(w->Append(Bytes(45)).ok());
  }
  EXPECT_EQ(r.aborts, 1);
  EXPECT_EQ(r.in_flight.load(), 0);
  EXPECT_EQ(r.parts.size(), 4u);
  // Abandoned before any part: nothing was started, nothing to abort.
  Record small;
  {
    auto w = Writer(&small, 10, 4);
    ASSERT_TRUE(w->Append(Bytes(5)).ok());
  }
  EXPECT_EQ(small.aborts, 0);
  EXPECT_FALSE(small.put_whole);
}

}  // namespace
}  // namespace ferry::storage
