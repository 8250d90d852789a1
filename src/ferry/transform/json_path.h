// get_json_object: a JSONPath subset evaluated on JSON text, as Spark's GetJsonObject does.
// Paths start with `$` and continue with `.name`, `['name']`, `[index]` and `[*]`. The result
// is the matched string's content (unquoted), or the JSON text of other values (objects and
// arrays minified); nullopt for invalid JSON, a path that matches nothing, or JSON null. `[*]`
// returns a JSON array of the matches. simdjson (DOM API) parses the text.
//
// Thread-safety: a JsonPath is immutable; JsonPathEvaluator holds a parser, one per thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::transform {

class JsonPath {
 public:
  struct Step {
    enum Kind { kField, kIndex, kWildcard } kind = kField;
    std::string name;
    int64_t index = 0;
  };
  // nullopt for a malformed path.
  static std::optional<JsonPath> Parse(std::string_view path);
  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::vector<Step> steps_;
};

class JsonPathEvaluator {
 public:
  JsonPathEvaluator();
  ~JsonPathEvaluator();
  std::optional<std::string> Evaluate(std::string_view json, const JsonPath& path);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;
};

}  // namespace ferry::transform
