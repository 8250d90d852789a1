// Process-wide settings of the C library's allocator, set once at the top of main().
#pragma once

namespace ferry::app {

// glibc malloc returns memory to the kernel eagerly: blocks from about 128 KiB up (its dynamic
// mmap threshold) are unmapped when freed, and an arena whose free top passes a few MiB is
// trimmed. ferry allocates and frees the same large buffers for every batch (decoded columns,
// Parquet pages, compressed pages), so each batch faulted its pages in afresh: 150,000 page
// faults and about 0.4 s of kernel time per million JetStream messages
// (docs/BENCHMARKS-history.md, "JetStream ingestion").
// This keeps blocks up to kMmapThresholdBytes in the heap and lets each arena keep up to
// kTrimThresholdBytes free, so the next batch reuses pages already mapped. The process gives
// back less memory after a burst, at most kTrimThresholdBytes per arena.
//
// It also caps the malloc arenas at one per core (at least kMinArenas); glibc's default is eight
// per core. Memory freed in one arena serves only the threads of that arena, and each arena
// keeps what it freed (above), so with an arena per thread (pipeline, writer, compression,
// librdkafka's broker threads) the peak RSS was the sum of every arena's peak. Under the Kafka
// benchmark at the default max_memory this cut the peak RSS from 277-313 MiB to 237-246 MiB
// (docs/BENCHMARKS-history.md, "Memory").
//
// Does nothing when GLIBC_TUNABLES sets a glibc.malloc tunable (the operator's choice wins),
// on a C library other than glibc, and under a sanitizer's allocator. Returns whether it
// applied the settings.
bool TuneAllocator();

inline constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's largest allowed value
inline constexpr int kTrimThresholdBytes = 64 << 20;
inline constexpr int kMinArenas = 2;

}  // namespace ferry::app
