#include "ferry/storage/gcs/gcs_batch.h"

#include <fmt/format.h>

#include <charconv>

#include "ferry/http/headers.h"

namespace ferry::storage::gcs {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The boundary parameter of a multipart Content-Type ("" when absent), unquoted.
std::string Boundary(std::string_view content_type) {
  size_t at = 0;
  while ((at = content_type.find(';', at)) != std::string_view::npos) {
    std::string_view param = Trim(content_type.substr(at + 1));
    param = param.substr(0, param.find(';'));
    const size_t eq = param.find('=');
    if (eq != std::string_view::npos &&
        http::EqualsIgnoreCase(Trim(param.substr(0, eq)), "boundary")) {
      std::string_view value = Trim(param.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      return std::string(value);
    }
    ++at;
  }
  return "";
}

// Splits "head\r\n\r\nrest" (or with bare \n): the head's lines and the rest. False without an
// empty line.
bool SplitHead(std::string_view text, std::string_view* head, std::string_view* rest) {
  size_t end = text.find("\r\n\r\n");
  size_t skip = 4;
  const size_t bare = text.find("\n\n");
  if (bare != std::string_view::npos && (end == std::string_view::npos || bare < end)) {
    end = bare;
    skip = 2;
  }
  if (end == std::string_view::npos) {
    return false;
  }
  *head = text.substr(0, end);
  *rest = text.substr(end + skip);
  return true;
}

// The value of header `name` in a head of "Name: value" lines ("" when absent).
std::string_view Header(std::string_view head, std::string_view name) {
  while (!head.empty()) {
    const size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    head = eol == std::string_view::npos ? "" : head.substr(eol + 1);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos &&
        http::EqualsIgnoreCase(Trim(line.substr(0, colon)), name)) {
      return Trim(line.substr(colon + 1));
    }
  }
  return "";
}

// "<response-7>" (or "<7>") -> 7; 0 when it is neither.
size_t ContentIdNumber(std::string_view id) {
  if (id.size() < 3 || id.front() != '<' || id.back() != '>') {
    return 0;
  }
  id = id.substr(1, id.size() - 2);
  if (id.starts_with("response-")) {
    id.remove_prefix(9);
  }
  size_t n = 0;
  auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  return ec == std::errc() && end == id.data() + id.size() ? n : 0;
}

}  // namespace

std::string BatchDeleteBody(std::string_view boundary, std::span<const std::string> object_paths) {
  std::string body;
  for (size_t i = 0; i < object_paths.size(); ++i) {
    body += fmt::format(
        "--{}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
        "Content-ID: <{}>\r\n\r\nDELETE {} HTTP/1.1\r\nContent-Length: 0\r\n\r\n\r\n",
        boundary, i + 1, object_paths[i]);
  }
  body += fmt::format("--{}--\r\n", boundary);
  return body;
}

Result<std::vector<BatchPartAnswer>> ParseBatchAnswer(std::string_view content_type,
                                                      std::string_view body, size_t parts) {
  const std::string boundary = Boundary(content_type);
  if (!content_type.starts_with("multipart/mixed") || boundary.empty()) {
    return DataLoss("batch answer: Content-Type '{}' is not multipart/mixed with a boundary",
                    content_type);
  }
  std::vector<BatchPartAnswer> answers(parts);
  const std::string delimiter = "--" + boundary;
  size_t at = body.find(delimiter);
  for (size_t place = 0; at != std::string_view::npos; ++place) {
    at += delimiter.size();
    if (body.substr(at).starts_with("--")) {
      break;  // the closing delimiter
    }
    const size_t next = body.find(delimiter, at);
    std::string_view part = body.substr(at, next == std::string_view::npos ? body.npos : next - at);
    at = next;
    // The delimiter's line end, and the CRLF before the next delimiter, belong to the framing.
    if (part.starts_with("\r\n")) {
      part.remove_prefix(2);
    } else if (part.starts_with("\n")) {
      part.remove_prefix(1);
    }
    if (part.ends_with("\r\n")) {
      part.remove_suffix(2);
    } else if (part.ends_with("\n")) {
      part.remove_suffix(1);
    }
    std::string_view part_head;
    std::string_view response;
    if (!SplitHead(part, &part_head, &response)) {
      return DataLoss("batch answer: part {} has no headers", place + 1);
    }
    const size_t number = ContentIdNumber(Header(part_head, "Content-ID"));
    const size_t index = number > 0 ? number - 1 : place;
    std::string_view head;
    std::string_view content;
    if (!SplitHead(response, &head, &content)) {
      head = response;  // a status line alone
      content = "";
    }
    // "HTTP/1.1 204 No Content"
    const size_t space = head.find(' ');
    int status = 0;
    if (head.starts_with("HTTP/") && space != std::string_view::npos) {
      std::from_chars(head.data() + space + 1, head.data() + head.size(), status);
    }
    if (status == 0) {
      return DataLoss("batch answer: part {} holds no HTTP status line", place + 1);
    }
    if (index < answers.size()) {
      answers[index] = {.status = status, .body = std::string(content)};
    }
  }
  return answers;
}

}  // namespace ferry::storage::gcs
