// PageArena: the memory that holds a row group's compressed data pages until the row group is
// flushed (column_writer.h: a chunk's dictionary page goes first, so its data pages wait).
//
// A row group's pages are most of a file (81 MB for the 1 M-row benchmark of
// docs/BENCHMARKS.md), and memory touched for the first time costs a page fault per 4 KiB; on
// a VM whose host backs guest memory lazily those faults are several microseconds each. Pages
// written one by one into malloc'd blocks fault once per 4 KiB as zstd writes them; here they
// go one after the other into segments that are populated ahead of the writes with one
// madvise(MADV_POPULATE_WRITE) per step (half the CPU of faulting page by page, measured on the
// benchmark VM), and the segments are reused by the next row group of the file instead of
// being given back.
//
// Each segment is aligned to 2 MiB and advised for transparent huge pages (MADV_HUGEPAGE; the
// kernel's default THP mode, "madvise", backs only advised memory so), and populated a 2 MiB
// step at a time: one fault per huge page instead of 512. On the benchmark VM this took the
// 1 M-row JSON -> Parquet run from 26,430 page faults to 6,500, and its CPU from 1.57 to 1.34 s
// at zstd level 3 and from 0.98 to 0.77 s at level 1 (medians of five interleaved runs on one
// CPU, docs/BENCHMARKS-history.md). Without THP (mode "never", an old kernel) the advice is
// ignored and the segment populates in 4 KiB pages as before. At most one huge page past the
// bytes in use is backed per segment.
//
// Use: Reserve(n) gives room for n bytes (the codec's bound), Commit(k) keeps the first k of
// them; Reset() after the row group's chunks went to the sink. A request larger than a
// segment returns null: the caller allocates that page itself.
//
// Thread-safety: not thread-safe (the writer's thread only; pool-compressed pages use malloc).
#pragma once

#include <cstddef>
#include <vector>

namespace ferry::parquet {

class PageArena {
 public:
  static constexpr size_t kSegmentBytes = size_t{32} << 20;  // address space, populated on use
  static constexpr size_t kHugePageBytes = size_t{2} << 20;  // x86-64's and arm64's (4K pages)
  static constexpr size_t kPopulateStep = kHugePageBytes;

  PageArena() = default;
  ~PageArena();
  PageArena(const PageArena&) = delete;
  PageArena& operator=(const PageArena&) = delete;

  // Room for n bytes at the end of what is committed, or null when n exceeds a segment or the
  // system refuses the mapping. Valid until the next Reserve or Reset.
  char* Reserve(size_t n);
  // Keeps the first n bytes of the last Reserve. REQUIRES: n <= the n reserved.
  void Commit(size_t n);
  // Forgets every committed byte; the memory stays mapped for reuse.
  void Reset();

  // Bytes mapped and populated (for tests and accounting).
  size_t populated_bytes() const;

 private:
  struct Segment {
    char* base = nullptr;
    size_t populated = 0;  // bytes from base known to be backed
  };
  // Makes segment bytes [0, end) of `s` backed.
  static void Populate(Segment* s, size_t end);
  // A new segment aligned to kHugePageBytes and advised for huge pages; null when the system
  // refuses the mapping.
  static char* MapSegment();

  std::vector<Segment> segments_;
  size_t current_ = 0;  // index into segments_ of the one being filled
  size_t used_ = 0;     // committed bytes of segments_[current_]
};

}  // namespace ferry::parquet
