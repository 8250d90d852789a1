// XML documents as S3, STS and Azure Storage answer them (ListObjectsV2 pages, multipart
// replies, <Error> bodies, AssumeRoleWithWebIdentity credentials), parsed by expat into a small
// tree with lookup helpers; and the escaping our own request bodies (DeleteObjects,
// CompleteMultipartUpload, Put Block List) need.
//
// The parser is strict and bounded: a document type declaration is refused (so no entity other
// than the five predefined ones and character references can expand: no "billion laughs", no
// external entities), and XmlLimits caps the input size, the nesting depth and the number of
// elements. Element names keep their local part only ("s3:Key" is "Key"), which is how every
// service we talk to is read. Text is decoded and kept as is (not trimmed: an S3 key may begin or
// end with spaces).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::http {

struct XmlLimits {
  size_t max_bytes = size_t{64} << 20;
  int max_depth = 64;
  size_t max_elements = 2'000'000;
};

struct XmlElement {
  std::string name;  // local name
  // The character data directly inside this element (between its children too), decoded.
  std::string text;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlElement> children;

  // The first child named `name`, or null.
  const XmlElement* Child(std::string_view child_name) const;
  // Every child named `name`, in document order.
  std::vector<const XmlElement*> Children(std::string_view child_name) const;
  // The text of the first child named `name`; nullopt when there is no such child.
  std::optional<std::string_view> ChildText(std::string_view child_name) const;
  // The element at a '/'-separated path of child names below this one ("Error/Code"), or null.
  const XmlElement* Find(std::string_view path) const;
  std::optional<std::string_view> Attribute(std::string_view attribute_name) const;
};

// The root element of `document`. InvalidArgument (with line and column) when it is not
// well-formed XML, declares a document type, or passes a limit.
Result<XmlElement> ParseXml(std::string_view document, const XmlLimits& limits = {});

// Appends `text` escaped for element content or a double-quoted attribute: & < > " ' as
// entities, and CR and TAB as character references so that they survive a parser's
// normalisation. REQUIRES: `text` is UTF-8 without characters XML 1.0 cannot hold (other
// control characters are written as they are and make the document invalid).
void AppendXmlEscaped(std::string* out, std::string_view text);
std::string XmlEscape(std::string_view text);

}  // namespace ferry::http
