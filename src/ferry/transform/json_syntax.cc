#include "ferry/transform/json_syntax.h"

#include <fmt/format.h>

namespace ferry::transform {

namespace {

class SyntaxChecker {
 public:
  SyntaxChecker(std::string_view s, int max_depth) : s_(s), max_depth_(max_depth) {}

  bool Run(std::string* error) {
    SkipSpace();
    bool ok = Value();
    while (ok) {
      SkipSpace();
      if (stack_.empty()) {
        ok = pos_ == s_.size() || Fail("unexpected text after the value");
        break;
      }
      char top = stack_.back();
      if (Eat(',')) {
        SkipSpace();
        ok = (top == '[' || Key()) && Value();
      } else if (Eat(top == '[' ? ']' : '}')) {
        stack_.pop_back();
      } else {
        ok = Fail(top == '[' ? "expected ',' or ']'" : "expected ',' or '}'");
      }
    }
    if (!ok) {
      *error = error_;
    }
    return ok;
  }

 private:
  bool Fail(std::string_view what) {
    error_ = fmt::format("{} at offset {}", what, pos_);
    return false;
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      pos_++;
      return true;
    }
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      pos_++;
    }
  }
  // An object key and its colon, leaving the position at the value.
  bool Key() {
    if (pos_ >= s_.size() || s_[pos_] != '"') {
      return Fail("expected a string key");
    }
    if (!String()) {
      return false;
    }
    SkipSpace();
    if (!Eat(':')) {
      return Fail("expected ':'");
    }
    SkipSpace();
    return true;
  }
  // One value; containers are opened (pushed) and closed by Run's loop.
  bool Value() {
    if (pos_ >= s_.size()) {
      return Fail("expected a value");
    }
    char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (static_cast<int>(stack_.size()) >= max_depth_) {
        return Fail(fmt::format("nesting deeper than {}", max_depth_));
      }
      pos_++;
      stack_.push_back(c);
      SkipSpace();
      if (Eat(c == '[' ? ']' : '}')) {
        stack_.pop_back();
        return true;
      }
      return c == '[' ? Value() : (Key() && Value());
    }
    if (c == '"') {
      return String();
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      return Number();
    }
    for (std::string_view lit : {"true", "false", "null"}) {
      if (s_.substr(pos_, lit.size()) == lit) {
        pos_ += lit.size();
        return true;
      }
    }
    return Fail("invalid value");
  }
  // The recursion in Value() above is bounded: it only descends through the first elements of
  // freshly opened containers, which the depth check limits.
  bool String() {
    pos_++;  // opening quote
    while (pos_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        pos_++;
        return true;
      }
      if (c < 0x20) {
        return Fail("control character in string");
      }
      if (c == '\\') {
        pos_++;
        if (pos_ >= s_.size()) {
          break;
        }
        char e = s_[pos_];
        if (e == 'u') {
          for (int k = 1; k <= 4; k++) {
            char h =
                pos_ + static_cast<size_t>(k) < s_.size() ? s_[pos_ + static_cast<size_t>(k)] : 0;
            if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) {
              return Fail("bad \\u escape");
            }
          }
          pos_ += 4;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return Fail("bad escape");
        }
      }
      pos_++;
    }
    return Fail("unterminated string");
  }
  bool Number() {
    size_t start = pos_;
    Eat('-');
    if (!Eat('0') && !Digits()) {
      return Fail("bad number");
    }
    if (Eat('.') && !Digits()) {
      return Fail("bad number");
    }
    if (Eat('e') || Eat('E')) {
      if (!Eat('+')) {
        Eat('-');
      }
      if (!Digits()) {
        return Fail("bad number");
      }
    }
    return pos_ > start;
  }
  bool Digits() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      pos_++;
    }
    return pos_ > start;
  }

  std::string_view s_;
  int max_depth_;
  size_t pos_ = 0;
  std::string stack_;
  std::string error_;
};

}  // namespace

bool CheckJsonSyntax(std::string_view text, int max_depth, std::string* error) {
  return SyntaxChecker(text, max_depth).Run(error);
}

}  // namespace ferry::transform
