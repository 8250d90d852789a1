#include "ferry/parquet/page_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

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

char* PageArena::MapSegment() {
  // Map a huge page more than needed and give back the ends, so that the segment starts on a
  // huge-page boundary (mmap aligns to 4 KiB only).
  const size_t mapped = kSegmentBytes + kHugePageBytes;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return nullptr;
  }
  char* start = static_cast<char*>(p);
  const uintptr_t at = reinterpret_cast<uintptr_t>(start);
  char* base = start + ((kHugePageBytes - at % kHugePageBytes) % kHugePageBytes);
  if (base > start) {
    munmap(start, static_cast<size_t>(base - start));
  }
  if (char* end = base + kSegmentBytes; end < start + mapped) {
    munmap(end, static_cast<size_t>(start + mapped - end));
  }
#ifdef MADV_HUGEPAGE
  // Refused when the kernel has no THP: the segment then populates in base pages.
  (void)madvise(base, kSegmentBytes, MADV_HUGEPAGE);
#endif
  return base;
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
    char* base = MapSegment();
    if (base == nullptr) {
      return nullptr;
    }
    segments_.push_back(Segment{base, 0});
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
