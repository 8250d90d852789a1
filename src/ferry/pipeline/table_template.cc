#include "ferry/pipeline/table_template.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include <re2/re2.h>

namespace ferry::pipeline {

namespace {

// "a-z0-9_-" -> the set of bytes it names.
Result<std::array<bool, 256>> ParseAllowedCharacters(std::string_view spec) {
  std::array<bool, 256> allowed{};
  for (size_t i = 0; i < spec.size(); ++i) {
    auto c = static_cast<unsigned char>(spec[i]);
    if (i + 2 < spec.size() && spec[i + 1] == '-') {
      auto last = static_cast<unsigned char>(spec[i + 2]);
      if (last < c) {
        return InvalidArgument("allowed_characters: range {}-{} is backwards", spec[i],
                               spec[i + 2]);
      }
      for (unsigned v = c; v <= last; ++v) {
        allowed[v] = true;
      }
      i += 2;
      continue;
    }
    allowed[c] = true;
  }
  return allowed;
}

// The subject's 1-based token `n`, or empty.
std::string_view SubjectToken(std::string_view subject, int n) {
  for (int i = 1; !subject.empty(); ++i) {
    size_t dot = subject.find('.');
    std::string_view token = subject.substr(0, dot);
    if (i == n) {
      return token;
    }
    if (dot == std::string_view::npos) {
      break;
    }
    subject.remove_prefix(dot + 1);
  }
  return {};
}

}  // namespace

Result<TableTemplate> TableTemplate::Parse(std::string_view text, const TableNameRules& rules) {
  TableTemplate t;
  t.rules_ = rules;
  FERRY_ASSIGN_OR_RETURN(t.allowed_, ParseAllowedCharacters(rules.allowed_characters));
  if (rules.max_length < 1) {
    return InvalidArgument("max_length must be at least 1");
  }
  if (!rules.allow.empty()) {
    auto re = std::make_shared<re2::RE2>(rules.allow, re2::RE2::Quiet);
    if (!re->ok()) {
      return InvalidArgument("allow: \"{}\" is not a valid pattern: {}", rules.allow, re->error());
    }
    t.allow_ = std::move(re);
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find('{', pos);
    if (open == std::string_view::npos) {
      t.parts_.push_back({.text = std::string(text.substr(pos))});
      break;
    }
    if (open > pos) {
      t.parts_.push_back({.text = std::string(text.substr(pos, open - pos))});
    }
    size_t close = text.find('}', open);
    if (close == std::string_view::npos) {
      return InvalidArgument("\"{}\": '{{' at {} is not closed", text, open + 1);
    }
    std::string_view name = text.substr(open + 1, close - open - 1);
    Part part;
    if (name == "topic") {
      part.kind = PartKind::kTopic;
    } else if (name == "subject") {
      part.kind = PartKind::kSubject;
    } else if (name.starts_with("subject:")) {
      std::string_view n = name.substr(8);
      int value = 0;
      auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), value);
      if (ec != std::errc() || end != n.data() + n.size() || value < 1 || value > 255) {
        return InvalidArgument("\"{}\": {{{}}} needs a token number from 1 (e.g. {{subject:2}})",
                               text, name);
      }
      part.kind = PartKind::kSubjectToken;
      part.index = value;
    } else if (name.starts_with("field:")) {
      std::string path(name.substr(6));
      if (path.empty() || path.front() == '.' || path.back() == '.' ||
          path.find("..") != std::string::npos) {
        return InvalidArgument("\"{}\": {{{}}} needs a field path (e.g. {{field:event_type}})",
                               text, name);
      }
      auto it = std::find(t.fields_.begin(), t.fields_.end(), path);
      part.kind = PartKind::kField;
      part.index = static_cast<int>(it - t.fields_.begin());
      if (it == t.fields_.end()) {
        t.fields_.push_back(std::move(path));
      }
    } else {
      return InvalidArgument(
          "\"{}\": unknown placeholder {{{}}} (use {{topic}}, {{subject}}, {{subject:N}} or "
          "{{field:NAME}})",
          text, name);
    }
    ++t.placeholders_;
    t.parts_.push_back(std::move(part));
    pos = close + 1;
  }
  return t;
}

std::string TableTemplate::Example() const {
  std::string out;
  for (const Part& p : parts_) {
    out += p.kind == PartKind::kLiteral ? p.text : "x";
  }
  return out;
}

std::optional<std::string> TableTemplate::Clean(std::string_view value) const {
  std::string out;
  for (char raw : value) {
    char c =
        rules_.lower_case ? static_cast<char>(std::tolower(static_cast<unsigned char>(raw))) : raw;
    if (allowed_[static_cast<unsigned char>(c)]) {
      out += c;
    } else {
      out += rules_.replacement;
    }
    if (static_cast<int64_t>(out.size()) >= rules_.max_length) {
      break;
    }
  }
  if (static_cast<int64_t>(out.size()) > rules_.max_length) {
    out.resize(static_cast<size_t>(rules_.max_length));
  }
  if (out.empty()) {
    return std::nullopt;
  }
  return out;
}

std::string_view TableTemplate::RawValue(
    const Part& p, const source::Message& message,
    const std::vector<std::optional<std::string>>& field_values) {
  switch (p.kind) {
    case PartKind::kLiteral:
      return p.text;
    case PartKind::kTopic:
      return message.topic;
    case PartKind::kSubject:
      return message.subject;
    case PartKind::kSubjectToken:
      return SubjectToken(message.subject, p.index);
    case PartKind::kField: {
      const auto& v = field_values.at(static_cast<size_t>(p.index));
      return v ? std::string_view(*v) : std::string_view();
    }
  }
  return {};
}

void TableTemplate::AppendKey(const source::Message& message,
                              const std::vector<std::optional<std::string>>& field_values,
                              std::string* key) const {
  for (const Part& p : parts_) {
    if (p.kind == PartKind::kLiteral) {
      continue;
    }
    std::string_view value = RawValue(p, message, field_values);
    const auto size = static_cast<uint32_t>(value.size());
    key->append(reinterpret_cast<const char*>(&size), sizeof(size));
    key->append(value);
  }
}

RenderedTable TableTemplate::Render(
    const source::Message& message,
    const std::vector<std::optional<std::string>>& field_values) const {
  RenderedTable out;
  for (const Part& p : parts_) {
    std::string_view value = RawValue(p, message, field_values);
    if (p.kind == PartKind::kLiteral) {
      out.table += value;
      continue;
    }
    std::optional<std::string> clean = Clean(value);
    if (!clean) {
      out.kind = RenderedTable::Kind::kMissing;
      return out;
    }
    if (allow_ != nullptr && !re2::RE2::FullMatch(*clean, *allow_)) {
      out.kind = RenderedTable::Kind::kDisallowed;
      out.detail =
          fmt::format("table name \"{}\" does not match allow = \"{}\"", *clean, rules_.allow);
      return out;
    }
    out.table += *clean;
  }
  return out;
}

std::optional<std::string> JsonFieldText(std::string_view payload, std::string_view path) {
  // simdjson reads past the end of its input: a padded copy, in a buffer kept per thread.
  thread_local simdjson::ondemand::parser parser;
  thread_local std::string padded;
  padded.assign(payload);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::ondemand::document doc;
  if (parser.iterate(padded.data(), payload.size(), padded.size()).get(doc) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  simdjson::ondemand::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  simdjson::ondemand::value value;
  std::string_view rest = path;
  while (true) {
    size_t dot = rest.find('.');
    std::string_view name = rest.substr(0, dot);
    if (object.find_field_unordered(name).get(value) != simdjson::SUCCESS) {
      return std::nullopt;
    }
    if (dot == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(dot + 1);
    if (value.get_object().get(object) != simdjson::SUCCESS) {
      return std::nullopt;
    }
  }
  simdjson::ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  switch (type) {
    case simdjson::ondemand::json_type::string: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) {
        return std::nullopt;
      }
      return std::string(s);
    }
    case simdjson::ondemand::json_type::number:
    case simdjson::ondemand::json_type::boolean: {
      std::string_view raw = value.raw_json_token();
      while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) {
        raw.remove_suffix(1);
      }
      return std::string(raw);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace ferry::pipeline
