#include "ferry/parquet/page_arena.h"

#include <sys/mman.h>

#include <algorithm>

namespace ferry::parquet {

PageArena::~PageArena() {
  for (const Segment& s : segments_) {
    munmap(s.base, kSegmentBytes);
  }
}

void PageArena::Populate(Segment* s, size_t end) {
  if (end <= s->populated) {
    return;
  }
  size_t to = std::min(kSegmentBytes, (end + kPopulateStep - 1) / kPopulateStep * kPopulateStep);
#ifdef MADV_POPULATE_WRITE
  // Failure (a kernel before 5.14) is harmless: the bytes then fault in as they are written.
  (void)madvise(s->base + s->populated, to - s->populated, MADV_POPULATE_WRITE);
#endif
  s->populated = to;
}

char* PageArena::Reserve(size_t n) {
  if (n > kSegmentBytes) {
    return nullptr;
  }
  if (!segments_.empty() && used_ + n > kSegmentBytes) {
    ++current_;
    used_ = 0;
  }
  if (current_ == segments_.size()) {
    void* p = mmap(nullptr, kSegmentBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      return nullptr;
    }
    segments_.push_back(Segment{static_cast<char*>(p), 0});
  }
  Segment& s = segments_[current_];
  Populate(&s, used_ + n);
  return s.base + used_;
}

void PageArena::Commit(size_t n) {
  used_ += n;
}

void PageArena::Reset() {
  current_ = 0;
  used_ = 0;
}

size_t PageArena::populated_bytes() const {
  size_t n = 0;
  for (const Segment& s : segments_) {
    n += s.populated;
  }
  return n;
}

}  // namespace ferry::parquet
