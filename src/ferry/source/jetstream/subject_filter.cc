#include "ferry/source/jetstream/subject_filter.h"

namespace ferry::source::jetstream {
namespace {

// Splits off the next token; returns false when `rest` is exhausted.
bool NextToken(std::string_view* rest, std::string_view* token, bool* done) {
  if (*done) {
    return false;
  }
  size_t dot = rest->find('.');
  *token = rest->substr(0, dot);
  if (dot == std::string_view::npos) {
    *done = true;
  } else {
    rest->remove_prefix(dot + 1);
  }
  return true;
}

}  // namespace

Status ValidateSubjectFilter(std::string_view filter) {
  if (filter.empty()) {
    return InvalidArgument("subject filter is empty");
  }
  std::string_view rest = filter;
  std::string_view token;
  bool done = false;
  while (NextToken(&rest, &token, &done)) {
    if (token.empty()) {
      return InvalidArgument("subject filter '{}' has an empty token", filter);
    }
    for (char c : token) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        return InvalidArgument("subject filter '{}' contains whitespace", filter);
      }
    }
    if (token.size() > 1 &&
        (token.find('*') != std::string_view::npos || token.find('>') != std::string_view::npos)) {
      return InvalidArgument("subject filter '{}': wildcards must be whole tokens", filter);
    }
    if (token == ">" && !done) {
      return InvalidArgument("subject filter '{}': '>' must be the last token", filter);
    }
  }
  return Status::OK();
}

bool SubjectFilterCovers(std::string_view filter, std::string_view pattern) {
  std::string_view f_rest = filter;
  std::string_view p_rest = pattern;
  std::string_view f;
  std::string_view p;
  bool f_done = false;
  bool p_done = false;
  while (true) {
    bool has_f = NextToken(&f_rest, &f, &f_done);
    bool has_p = NextToken(&p_rest, &p, &p_done);
    if (!has_f || !has_p) {
      return !has_f && !has_p;
    }
    if (f == ">") {
      return true;  // covers one or more remaining tokens, and p has at least this one
    }
    if (p == ">") {
      return false;  // p matches arbitrarily long subjects; f only a fixed number of tokens here
    }
    if (f == "*") {
      continue;  // any single token, including a '*' in the pattern
    }
    if (p == "*" || f != p) {
      return false;
    }
  }
}

bool SubjectFiltersOverlap(std::string_view a, std::string_view b) {
  std::string_view a_rest = a;
  std::string_view b_rest = b;
  std::string_view x;
  std::string_view y;
  bool a_done = false;
  bool b_done = false;
  while (true) {
    bool has_a = NextToken(&a_rest, &x, &a_done);
    bool has_b = NextToken(&b_rest, &y, &b_done);
    if (!has_a || !has_b) {
      return !has_a && !has_b;
    }
    if (x == ">" || y == ">") {
      return true;  // both still have this token; '>' takes it and anything after
    }
    if (x != "*" && y != "*" && x != y) {
      return false;
    }
  }
}

bool FilterCoversAll(std::string_view filter, std::span<const std::string> stream_subjects) {
  if (filter == ">") {
    return true;
  }
  if (stream_subjects.empty()) {
    return false;  // a stream without subjects (a mirror or sourced stream): unknown
  }
  for (const std::string& subject : stream_subjects) {
    if (!SubjectFilterCovers(filter, subject)) {
      return false;
    }
  }
  return true;
}

}  // namespace ferry::source::jetstream
