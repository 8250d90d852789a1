#include "ferry/transform/datetime_pattern.h"

#include <fmt/format.h>

#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_pattern_internal.h"

namespace ferry::transform {

using datetime_internal::IsDigit;
using datetime_internal::IsLetter;
using datetime_internal::kDaysLong;
using datetime_internal::kDaysShort;
using datetime_internal::kMonthsLong;
using datetime_internal::kMonthsShort;
using datetime_internal::Lower;
using Item = DateTimePattern::Item;

namespace {

bool IsNumeric(const Item& it) {
  return it.max_width > 0 && it.letter != 'S';
}

// Widths for parsing numbers, or an error message for a letter/count Spark refuses.
std::string SetWidths(Item* it, DateTimePattern::Purpose purpose) {
  int n = it->count;
  auto range = [&](int lo, int hi) {
    it->min_width = lo;
    it->max_width = hi;
    return std::string();
  };
  switch (it->letter) {
    case 'y':
      return n == 2 ? range(2, 2) : range(std::min(n, 9), 9);
    case 'M':
    case 'L':
      return n == 1 ? range(1, 9) : n == 2 ? range(2, 2) : n <= 5 ? "" : "too many letters";
    case 'd':
    case 'H':
    case 'h':
    case 'K':
    case 'k':
    case 'm':
    case 's':
      return n == 1 ? range(1, 9) : n == 2 ? range(2, 2) : "up to two letters allowed";
    case 'D':
      return n == 1   ? range(1, 9)
             : n == 2 ? range(2, 3)
             : n == 3 ? range(3, 3)
                      : "too many letters";
    case 'S':
      return n <= 9 ? "" : "up to nine letters allowed";
    case 'a':
      return n == 1 ? "" : "only one letter allowed";
    case 'E':
    case 'G':
      return n <= 5 ? "" : "too many letters";
    case 'Q':
    case 'q':
      if (purpose == DateTimePattern::Purpose::kParse) {
        return "can only be used for formatting";
      }
      return n <= 2 ? range(n, 2) : n <= 5 ? "" : "too many letters";
    case 'V':
      return n == 2 ? "" : "pattern letter count must be 2";
    case 'z':
      return n <= 4 ? "" : "too many letters";
    case 'O':
      return n == 1 || n == 4 ? "" : "pattern letter count must be 1 or 4";
    case 'X':
    case 'x':
    case 'Z':
      return n <= 5 ? "" : "too many letters";
    case 'Y':
    case 'w':
    case 'W':
    case 'u':
    case 'e':
    case 'c':
      return "week-based patterns are not supported (as in Spark 3)";
    default:
      return "is not supported";
  }
}

// For each variable-width number, the digits the fixed-width numbers right after it need.
void ReserveAdjacent(std::vector<Item>* items) {
  for (size_t i = 0; i < items->size(); i++) {
    Item& it = (*items)[i];
    if (!it.section.empty()) {
      ReserveAdjacent(&it.section);
    }
    if (!IsNumeric(it) || it.min_width == it.max_width) {
      continue;
    }
    for (size_t j = i + 1; j < items->size(); j++) {
      const Item& next = (*items)[j];
      if (!IsNumeric(next) || next.min_width != next.max_width) {
        break;
      }
      it.reserved += next.max_width;
    }
  }
}

}  // namespace

Result<DateTimePattern> DateTimePattern::Compile(std::string_view pattern, Purpose purpose) {
  DateTimePattern p;
  p.pattern_ = std::string(pattern);
  std::vector<std::vector<Item>> stack(1);
  auto add_literal = [&](std::string_view text) {
    std::vector<Item>& top = stack.back();
    if (top.empty() || top.back().letter != 0) {
      top.push_back(Item{});
    }
    top.back().literal.append(text);
  };
  size_t i = 0;
  while (i < pattern.size()) {
    char c = pattern[i];
    if (IsLetter(c)) {
      size_t j = i;
      while (j < pattern.size() && pattern[j] == c) {
        j++;
      }
      Item it;
      it.letter = c;
      it.count = static_cast<int>(j - i);
      std::string err = SetWidths(&it, purpose);
      if (!err.empty()) {
        return InvalidArgument("datetime pattern '{}': letter '{}' at {}: {}", pattern, c, i + 1,
                               err);
      }
      stack.back().push_back(std::move(it));
      i = j;
    } else if (c == '\'') {
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '\'') {
        add_literal("'");
        i = j + 1;
        continue;
      }
      std::string text;
      while (true) {
        if (j >= pattern.size()) {
          return InvalidArgument("datetime pattern '{}': unterminated quote at {}", pattern, i + 1);
        }
        if (pattern[j] == '\'') {
          if (j + 1 < pattern.size() && pattern[j + 1] == '\'') {
            text.push_back('\'');
            j += 2;
            continue;
          }
          break;
        }
        text.push_back(pattern[j++]);
      }
      add_literal(text);
      i = j + 1;
    } else if (c == '[') {
      stack.emplace_back();
      i++;
    } else if (c == ']') {
      if (stack.size() == 1) {
        return InvalidArgument("datetime pattern '{}': ']' at {} without '['", pattern, i + 1);
      }
      Item section;
      section.letter = '[';
      section.section = std::move(stack.back());
      stack.pop_back();
      stack.back().push_back(std::move(section));
      i++;
    } else if (c == '#' || c == '{' || c == '}') {
      return InvalidArgument("datetime pattern '{}': reserved character '{}' at {}", pattern, c,
                             i + 1);
    } else {
      add_literal(pattern.substr(i, 1));
      i++;
    }
  }
  while (stack.size() > 1) {  // sections left open end with the pattern
    Item section;
    section.letter = '[';
    section.section = std::move(stack.back());
    stack.pop_back();
    stack.back().push_back(std::move(section));
  }
  p.items_ = std::move(stack[0]);
  ReserveAdjacent(&p.items_);
  return p;
}

}  // namespace ferry::transform
