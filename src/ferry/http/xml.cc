#include "ferry/http/xml.h"

#include <expat.h>

#include <memory>

namespace ferry::http {

namespace {

struct ParserDeleter {
  void operator()(XML_ParserStruct* p) const { XML_ParserFree(p); }
};

std::string_view LocalName(std::string_view name) {
  size_t colon = name.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == name.size()) {
    return name;
  }
  return name.substr(colon + 1);
}

// The tree being built, and why parsing was stopped when our own check failed.
struct Builder {
  XML_Parser parser = nullptr;
  const XmlLimits* limits = nullptr;
  XmlElement root;
  bool have_root = false;
  // The open elements, innermost last. Each is the last child of the one before it, and no
  // element is added to a vector holding an open element, so these pointers stay valid.
  std::vector<XmlElement*> open;
  size_t elements = 0;
  std::string error;

  void Stop(std::string why) {
    if (error.empty()) {
      error = std::move(why);
    }
    XML_StopParser(parser, XML_FALSE);
  }
};

void OnStart(void* user, const XML_Char* name, const XML_Char** attrs) {
  auto* b = static_cast<Builder*>(user);
  if (!b->error.empty()) {
    return;
  }
  if (++b->elements > b->limits->max_elements) {
    b->Stop(fmt::format("more than {} elements", b->limits->max_elements));
    return;
  }
  if (static_cast<int>(b->open.size()) >= b->limits->max_depth) {
    b->Stop(fmt::format("elements nested deeper than {}", b->limits->max_depth));
    return;
  }
  XmlElement* e = nullptr;
  if (b->open.empty()) {
    b->have_root = true;
    e = &b->root;
  } else {
    b->open.back()->children.emplace_back();
    e = &b->open.back()->children.back();
  }
  e->name = std::string(LocalName(name));
  for (int i = 0; attrs[i] != nullptr && attrs[i + 1] != nullptr; i += 2) {
    e->attributes.emplace_back(std::string(LocalName(attrs[i])), attrs[i + 1]);
  }
  b->open.push_back(e);
}

void OnEnd(void* user, const XML_Char*) {
  auto* b = static_cast<Builder*>(user);
  if (!b->open.empty()) {
    b->open.pop_back();
  }
}

void OnText(void* user, const XML_Char* s, int len) {
  auto* b = static_cast<Builder*>(user);
  if (!b->open.empty() && len > 0) {
    b->open.back()->text.append(s, static_cast<size_t>(len));
  }
}

void OnDoctype(void* user, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  static_cast<Builder*>(user)->Stop("a document type declaration (DOCTYPE) is not accepted");
}

void OnEntityDecl(void* user, const XML_Char*, int, const XML_Char*, int, const XML_Char*,
                  const XML_Char*, const XML_Char*, const XML_Char*) {
  static_cast<Builder*>(user)->Stop("entity declarations are not accepted");
}

}  // namespace

const XmlElement* XmlElement::Child(std::string_view child_name) const {
  for (const XmlElement& c : children) {
    if (c.name == child_name) {
      return &c;
    }
  }
  return nullptr;
}

std::vector<const XmlElement*> XmlElement::Children(std::string_view child_name) const {
  std::vector<const XmlElement*> out;
  for (const XmlElement& c : children) {
    if (c.name == child_name) {
      out.push_back(&c);
    }
  }
  return out;
}

std::optional<std::string_view> XmlElement::ChildText(std::string_view child_name) const {
  const XmlElement* c = Child(child_name);
  if (c == nullptr) {
    return std::nullopt;
  }
  return std::string_view(c->text);
}

const XmlElement* XmlElement::Find(std::string_view path) const {
  const XmlElement* e = this;
  while (e != nullptr && !path.empty()) {
    size_t slash = path.find('/');
    e = e->Child(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  return e;
}

std::optional<std::string_view> XmlElement::Attribute(std::string_view attribute_name) const {
  for (const auto& [k, v] : attributes) {
    if (k == attribute_name) {
      return std::string_view(v);
    }
  }
  return std::nullopt;
}

Result<XmlElement> ParseXml(std::string_view document, const XmlLimits& limits) {
  if (document.size() > limits.max_bytes) {
    return InvalidArgument("XML document of {} bytes is larger than the limit of {}",
                           document.size(), limits.max_bytes);
  }
  std::unique_ptr<XML_ParserStruct, ParserDeleter> parser(XML_ParserCreate(nullptr));
  if (parser == nullptr) {
    return ResourceExhausted("XML: cannot create a parser");
  }
  Builder b;
  b.parser = parser.get();
  b.limits = &limits;
  XML_SetUserData(parser.get(), &b);
  XML_SetElementHandler(parser.get(), &OnStart, &OnEnd);
  XML_SetCharacterDataHandler(parser.get(), &OnText);
  XML_SetStartDoctypeDeclHandler(parser.get(), &OnDoctype);
  XML_SetEntityDeclHandler(parser.get(), &OnEntityDecl);
  XML_SetParamEntityParsing(parser.get(), XML_PARAM_ENTITY_PARSING_NEVER);

  // expat takes an int length: feed large documents in pieces.
  constexpr size_t kChunk = size_t{1} << 30;
  XML_Status rc = XML_STATUS_OK;
  size_t offset = 0;
  do {
    size_t n = std::min(kChunk, document.size() - offset);
    bool last = offset + n == document.size();
    rc = XML_Parse(parser.get(), document.data() + offset, static_cast<int>(n),
                   last ? XML_TRUE : XML_FALSE);
    offset += n;
  } while (rc == XML_STATUS_OK && offset < document.size());
  if (rc != XML_STATUS_OK || !b.error.empty()) {
    std::string why =
        !b.error.empty() ? b.error : std::string(XML_ErrorString(XML_GetErrorCode(parser.get())));
    return InvalidArgument("XML line {} column {}: {}", XML_GetCurrentLineNumber(parser.get()),
                           XML_GetCurrentColumnNumber(parser.get()), why);
  }
  if (!b.have_root) {
    return InvalidArgument("XML: no root element");
  }
  return std::move(b.root);
}

void AppendXmlEscaped(std::string* out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&':
        *out += "&amp;";
        break;
      case '<':
        *out += "&lt;";
        break;
      case '>':
        *out += "&gt;";
        break;
      case '"':
        *out += "&quot;";
        break;
      case '\'':
        *out += "&apos;";
        break;
      case '\r':
        *out += "&#13;";
        break;
      case '\t':
        *out += "&#9;";
        break;
      default:
        out->push_back(c);
    }
  }
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  AppendXmlEscaped(&out, text);
  return out;
}

}  // namespace ferry::http
