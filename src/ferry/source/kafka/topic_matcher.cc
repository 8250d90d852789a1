#include "ferry/source/kafka/topic_matcher.h"

#include <algorithm>

namespace ferry::source::kafka {

Result<TopicMatcher> TopicMatcher::Create(const std::vector<std::string>& topics) {
  TopicMatcher m;
  for (const std::string& t : topics) {
    if (t.empty() || t[0] != '^') {
      m.names_.push_back(t);
      continue;
    }
    try {
      m.patterns_.emplace_back(t, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return InvalidArgument("kafka topic pattern '{}' is not a valid regular expression: {}", t,
                             e.what());
    }
  }
  return m;
}

bool TopicMatcher::Matches(std::string_view topic) const {
  if (std::find(names_.begin(), names_.end(), topic) != names_.end()) {
    return true;
  }
  if (topic.starts_with("__")) {
    return false;
  }
  return std::any_of(patterns_.begin(), patterns_.end(), [&](const std::regex& r) {
    return std::regex_search(topic.begin(), topic.end(), r);
  });
}

}  // namespace ferry::source::kafka
