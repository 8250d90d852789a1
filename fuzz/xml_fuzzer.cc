// libFuzzer target: the XML parser of the http layer (http/xml.h), which reads the answers of S3,
// STS and Azure. Input parses or fails with InvalidArgument; a parsed tree stays within the
// limits, and, written back with XmlEscape, parses to the same names, texts and shape (aborts on
// a difference).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ferry/http/xml.h"

namespace {

constexpr ferry::http::XmlLimits kLimits{
    .max_bytes = 1 << 20, .max_depth = 32, .max_elements = 10'000};

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "xml_fuzzer: %s\n", what);
  std::abort();
}

// A local name that is a valid element name on its own (a prefix cut off at ':' may leave one
// that starts with a digit, '-' or '.').
bool WritableName(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  auto c = static_cast<unsigned char>(name[0]);
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' || c >= 0x80;
}

// Checks the limits; false when the tree holds a name that cannot be written back.
bool Check(const ferry::http::XmlElement& e, int depth, size_t* elements) {
  if (depth > kLimits.max_depth || ++*elements > kLimits.max_elements) {
    Fail("limit passed");
  }
  bool writable = WritableName(e.name);
  for (const ferry::http::XmlElement& c : e.children) {
    writable = Check(c, depth + 1, elements) && writable;
  }
  return writable;
}

void Write(const ferry::http::XmlElement& e, std::string* out) {
  *out += "<" + e.name + ">";
  ferry::http::AppendXmlEscaped(out, e.text);
  for (const ferry::http::XmlElement& c : e.children) {
    Write(c, out);
  }
  *out += "</" + e.name + ">";
}

void ExpectSame(const ferry::http::XmlElement& a, const ferry::http::XmlElement& b) {
  if (a.name != b.name || a.text != b.text || a.children.size() != b.children.size()) {
    Fail("written tree parses differently");
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    ExpectSame(a.children[i], b.children[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  ferry::Result<ferry::http::XmlElement> root = ferry::http::ParseXml(input, kLimits);
  if (!root.ok()) {
    if (root.status().code() != ferry::StatusCode::kInvalidArgument) {
      Fail("an error other than InvalidArgument");
    }
    return 0;
  }
  size_t elements = 0;
  if (!Check(*root, 1, &elements)) {
    return 0;
  }
  std::string written;
  Write(*root, &written);
  ferry::Result<ferry::http::XmlElement> again =
      ferry::http::ParseXml(written, ferry::http::XmlLimits{});
  if (!again.ok()) {
    std::fprintf(stderr, "%s\n", again.status().ToString().c_str());
    Fail("written tree does not parse");
  }
  ExpectSame(*root, *again);
  // The lookups callers use.
  (void)root->Find("a/b/c");
  (void)root->ChildText("Key");
  (void)root->Children("Contents");
  return 0;
}
