// NATS subject filters: validation, and whether one filter covers another subject pattern.
// The source uses coverage to know when a filter takes every message of the stream: then a
// skipped stream sequence can only mean a deleted message, never one of another subject.
//
// Subjects are dot-separated tokens; `*` matches one token, `>` (last token only) one or more.
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ferry/base/status.h"

namespace ferry::source::jetstream {

// OK when `filter` is a well-formed subject or subject pattern: non-empty tokens, no whitespace,
// wildcards only as whole tokens, `>` only last.
Status ValidateSubjectFilter(std::string_view filter);

// True when every subject matching `pattern` also matches `filter`.
// REQUIRES: both pass ValidateSubjectFilter.
bool SubjectFilterCovers(std::string_view filter, std::string_view pattern);

// True when some subject matches both patterns (two source partitions would both take it).
// REQUIRES: both pass ValidateSubjectFilter.
bool SubjectFiltersOverlap(std::string_view a, std::string_view b);

// True when `filter` covers every subject pattern of the stream.
bool FilterCoversAll(std::string_view filter, std::span<const std::string> stream_subjects);

}  // namespace ferry::source::jetstream
