// TopicMatcher: the topics a Kafka pipeline reads, as configured: exact names, and regular
// expressions starting with '^' (librdkafka's subscription syntax, ECMAScript here). Used where
// ferry matches cluster metadata itself instead of subscribing: the manual assignment of
// KafkaSource and the broker heads of `ferry status`. A pattern never matches an internal topic
// (a name starting with "__", such as __consumer_offsets), as Kafka's own pattern subscription.
//
// Thread-safety: immutable after Create.
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::source::kafka {

class TopicMatcher {
 public:
  // InvalidArgument naming a pattern that is not a valid regular expression.
  static Result<TopicMatcher> Create(const std::vector<std::string>& topics);

  bool Matches(std::string_view topic) const;
  // The exact names (not the patterns), as configured.
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::vector<std::regex> patterns_;
};

}  // namespace ferry::source::kafka
