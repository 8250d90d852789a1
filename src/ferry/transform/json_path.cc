#include "ferry/transform/json_path.h"

#include <simdjson.h>

#include "ferry/transform/decimal_math.h"

namespace ferry::transform {

namespace dom = simdjson::dom;

std::optional<JsonPath> JsonPath::Parse(std::string_view path) {
  if (path.empty() || path[0] != '$') {
    return std::nullopt;
  }
  JsonPath p;
  size_t i = 1;
  while (i < path.size()) {
    Step step;
    if (path[i] == '.') {
      size_t end = path.find_first_of(".[", i + 1);
      end = end == std::string_view::npos ? path.size() : end;
      step.name = std::string(path.substr(i + 1, end - i - 1));
      if (step.name.empty()) {
        return std::nullopt;
      }
      step.kind = step.name == "*" ? Step::kWildcard : Step::kField;
      i = end;
    } else if (path[i] == '[') {
      size_t end = path.find(']', i);
      if (end == std::string_view::npos) {
        return std::nullopt;
      }
      std::string_view inside = path.substr(i + 1, end - i - 1);
      if (inside == "*") {
        step.kind = Step::kWildcard;
      } else if (inside.size() >= 2 && inside.front() == '\'' && inside.back() == '\'') {
        step.name = std::string(inside.substr(1, inside.size() - 2));
      } else {
        if (inside.empty() || inside.size() > 9) {
          return std::nullopt;
        }
        for (char c : inside) {
          if (c < '0' || c > '9') {
            return std::nullopt;
          }
          step.index = step.index * 10 + (c - '0');
        }
        step.kind = Step::kIndex;
      }
      i = end + 1;
    } else {
      return std::nullopt;
    }
    p.steps_.push_back(std::move(step));
  }
  return p;
}

struct JsonPathEvaluator::Parser {
  dom::parser parser;
};

JsonPathEvaluator::JsonPathEvaluator() : parser_(std::make_unique<Parser>()) {}
JsonPathEvaluator::~JsonPathEvaluator() = default;

namespace {

void Collect(dom::element e, const std::vector<JsonPath::Step>& steps, size_t k,
             std::vector<dom::element>* out) {
  if (k == steps.size()) {
    out->push_back(e);
    return;
  }
  const JsonPath::Step& s = steps[k];
  dom::element child;
  if (s.kind == JsonPath::Step::kField) {
    dom::object obj;
    if (!e.get_object().get(obj) && !obj.at_key(s.name).get(child)) {
      Collect(child, steps, k + 1, out);
    }
    return;
  }
  dom::array arr;
  if (e.get_array().get(arr)) {
    return;
  }
  if (s.kind == JsonPath::Step::kIndex) {
    if (!arr.at(static_cast<size_t>(s.index)).get(child)) {
      Collect(child, steps, k + 1, out);
    }
    return;
  }
  for (dom::element item : arr) {
    Collect(item, steps, k + 1, out);
  }
}

std::string Text(dom::element e, bool top) {
  std::string_view str;
  double d = 0;
  if (top && !e.get_string().get(str)) {
    return std::string(str);
  }
  if (top && e.type() == dom::element_type::DOUBLE && !e.get_double().get(d)) {
    return JavaDoubleText(d);
  }
  return simdjson::minify(e);
}

}  // namespace

std::optional<std::string> JsonPathEvaluator::Evaluate(std::string_view json,
                                                       const JsonPath& path) {
  dom::element root;
  if (parser_->parser.parse(json.data(), json.size()).get(root)) {
    return std::nullopt;
  }
  std::vector<dom::element> matches;
  Collect(root, path.steps(), 0, &matches);
  bool wildcard = false;
  for (const JsonPath::Step& s : path.steps()) {
    wildcard = wildcard || s.kind == JsonPath::Step::kWildcard;
  }
  if (matches.empty() || (!wildcard && matches[0].is_null())) {
    return std::nullopt;
  }
  if (!wildcard) {
    return Text(matches[0], true);
  }
  std::string out = "[";
  for (size_t i = 0; i < matches.size(); i++) {
    if (i > 0) {
      out.push_back(',');
    }
    out += Text(matches[i], false);
  }
  return out + "]";
}

}  // namespace ferry::transform
