// String functions: concat (and ||), concat_ws, substr/substring, lower, upper, trim, ltrim,
// rtrim, length/char_length, split, regexp_extract, regexp_replace. Positions and lengths count
// Unicode code points, as Spark's UTF8String does. Regular expressions are RE2's dialect (see
// docs/transform.md): Java's named groups (?<name>...) are accepted, backreferences and
// lookaround are not; replacements use Java's syntax ($1, ${name}, \$).
#include <fmt/format.h>
#include <locale.h>
#include <wctype.h>

#include <re2/re2.h>

#include "ferry/transform/expr_internal.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform {

namespace {

using columnar::BinaryColumn;

// --- concat, concat_ws ------------------------------------------------------------------------

Status AnalyzeConcat(ExprNode* n, AnalyzeContext& ctx) {
  n->nullable = false;
  for (size_t i = 0; i < n->args.size(); i++) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, i, DataType::String()));
    n->nullable = n->nullable || n->args[i]->nullable;
  }
  n->type = DataType::String();
  return Status::OK();
}

Vec EvalConcat(const ExprNode&, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  ForEachRow(args, ctx, col, [&](int64_t i) {
    for (const Vec& a : args) {
      col->mutable_data()->append(a.Str(i));
    }
    col->CommitValue();
  });
  return out;
}

bool IsStringArray(const DataTypePtr& t) {
  return t && t->id() == TypeId::kList && IsStringLike(t->element().type);
}

Status AnalyzeConcatWs(ExprNode* n, AnalyzeContext& ctx) {
  for (size_t i = 0; i < n->args.size(); i++) {
    if (i == 0 || !IsStringArray(n->args[i]->type)) {
      FERRY_RETURN_IF_ERROR(ctx.CastArg(n, i, DataType::String()));
    }
  }
  n->type = DataType::String();
  n->nullable = n->args[0]->nullable;
  return Status::OK();
}

// concat_ws(sep, ...): NULL arguments (and NULL array elements) are skipped.
Vec EvalConcatWs(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  for (int64_t i = 0; i < ctx.rows; i++) {
    if (args[0].IsNull(i)) {
      col->AppendNull();
      continue;
    }
    std::string* data = col->mutable_data();
    bool first = true;
    auto add = [&](std::string_view s) {
      if (!first) {
        data->append(args[0].Str(i));
      }
      data->append(s);
      first = false;
    };
    for (size_t a = 1; a < args.size(); a++) {
      if (args[a].IsNull(i)) {
        continue;
      }
      if (IsStringArray(n.args[a]->type)) {
        const auto* list = args[a].col->As<columnar::ListColumn>();
        const auto& items = *list->child().As<BinaryColumn>();
        int64_t row = args[a].Row(i);
        for (int64_t k = list->offsets()[static_cast<size_t>(row)];
             k < list->offsets()[static_cast<size_t>(row) + 1]; k++) {
          if (items.IsValid(k)) {
            add(items.Value(k));
          }
        }
      } else {
        add(args[a].Str(i));
      }
    }
    col->CommitValue();
  }
  return out;
}

// --- substr, lower, upper, trim, length --------------------------------------------------------

// Spark's UTF8String.substringSQL: 1-based `pos` (0 acts as 1, negative counts from the end).
std::string_view SubstringSql(std::string_view s, int64_t pos, int64_t len) {
  auto chars = static_cast<int64_t>(CountCodePoints(s));
  int64_t start = pos > 0 ? pos - 1 : (pos < 0 ? chars + pos : 0);
  int64_t end = len == INT64_MAX ? chars : start + len;
  start = std::max<int64_t>(start, 0);
  if (start >= end || start >= chars) {
    return {};
  }
  size_t b = CodePointOffset(s, static_cast<size_t>(start));
  size_t e = CodePointOffset(s, static_cast<size_t>(std::min(end, chars)));
  return s.substr(b, e - b);
}

Vec EvalSubstr(const ExprNode&, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  ForEachRow(args, ctx, col, [&](int64_t i) {
    int64_t len = args.size() > 2 ? args[2].Get<int32_t>(i) : INT64_MAX;
    col->Append(SubstringSql(args[0].Str(i), args[1].Get<int32_t>(i), len));
  });
  return out;
}

// Unicode case mapping through glibc's C.UTF-8 tables (one code point to one; Java's few
// one-to-many mappings such as ß to SS are not applied).
locale_t Utf8Locale() {
  static locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return loc;
}

Vec EvalCase(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  bool upper = n.name == "upper" || n.name == "ucase";
  locale_t loc = Utf8Locale();
  ForEachRow(args, ctx, col, [&](int64_t i) {
    std::string_view s = args[0].Str(i);
    std::string* data = col->mutable_data();
    for (size_t p = 0; p < s.size();) {
      auto c = static_cast<uint8_t>(s[p]);
      if (c < 0x80) {
        data->push_back(upper ? static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c)
                              : static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
        p++;
        continue;
      }
      uint32_t cp = NextCodePoint(s, &p);
      if (loc != static_cast<locale_t>(nullptr)) {
        cp = static_cast<uint32_t>(upper ? towupper_l(static_cast<wint_t>(cp), loc)
                                         : towlower_l(static_cast<wint_t>(cp), loc));
      }
      AppendCodePoint(cp, data);
    }
    col->CommitValue();
  });
  return out;
}

Vec EvalTrim(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  bool left = n.name != "rtrim", right = n.name != "ltrim";
  ForEachRow(args, ctx, col, [&](int64_t i) {
    std::string_view s = args[0].Str(i);
    std::string_view set = args.size() > 1 ? args[1].Str(i) : " ";
    auto in_set = [&](std::string_view ch) { return set.find(ch) != std::string_view::npos; };
    size_t b = 0, e = s.size();
    while (left && b < e) {
      size_t p = b;
      NextCodePoint(s, &p);
      if (!in_set(s.substr(b, p - b))) {
        break;
      }
      b = p;
    }
    while (right && e > b) {
      size_t p = e - 1;
      while (p > b && (static_cast<uint8_t>(s[p]) & 0xC0) == 0x80) {
        p--;
      }
      if (!in_set(s.substr(p, e - p))) {
        break;
      }
      e = p;
    }
    col->Append(s.substr(b, e - b));
  });
  return out;
}

Status AnalyzeLength(ExprNode* n, AnalyzeContext& ctx) {
  const DataTypePtr& t = n->args[0]->type;
  if (!t || t->id() != TypeId::kBinary) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::String()));
  }
  n->type = DataType::Int32();
  n->nullable = n->args[0]->nullable;
  return Status::OK();
}

Vec EvalLength(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::Int32(), ctx.rows);
  auto* col = out.owned->As<columnar::Int32Column>();
  bool bytes = n.args[0]->type->id() == TypeId::kBinary;
  ForEachRow(args, ctx, col, [&](int64_t i) {
    std::string_view s = args[0].Str(i);
    col->Append(static_cast<int32_t>(bytes ? s.size() : CountCodePoints(s)));
  });
  return out;
}

// --- Regular expressions -----------------------------------------------------------------------

// Java's (?<name>...) as RE2's (?P<name>...).
std::string ToRe2Syntax(std::string_view java) {
  std::string out;
  for (size_t i = 0; i < java.size(); i++) {
    if (java[i] == '\\' && i + 1 < java.size()) {
      out.append(java.substr(i, 2));
      i++;
    } else if (java.substr(i, 3) == "(?<" && i + 3 < java.size() && java[i + 3] != '=' &&
               java[i + 3] != '!') {
      out += "(?P<";
      i += 2;
    } else {
      out.push_back(java[i]);
    }
  }
  return out;
}

std::shared_ptr<const RE2> Compile(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(ToRe2Syntax(pattern), options);
  return re->ok() ? re : nullptr;
}

// The regex of argument `k`: precompiled when it is a literal, else compiled for the row (the
// last one is cached). Null for an invalid pattern.
class RegexSource {
 public:
  RegexSource(const ExprNode& n, const Vec& pattern) : node_(n), pattern_(pattern) {}
  const RE2* At(int64_t i) {
    if (node_.state) {
      return static_cast<const RE2*>(node_.state.get());
    }
    std::string_view p = pattern_.Str(i);
    if (!cached_ || p != cached_text_) {
      cached_text_ = std::string(p);
      cached_ = Compile(p);
    }
    return cached_.get();
  }

 private:
  const ExprNode& node_;
  const Vec& pattern_;
  std::string cached_text_;
  std::shared_ptr<const RE2> cached_;
};

Status AnalyzeRegex(ExprNode* n, AnalyzeContext& ctx) {
  const bool split = n->name == "split";
  std::vector<DataTypePtr> types = {DataType::String(), DataType::String()};
  if (n->name == "regexp_replace") {
    types.push_back(DataType::String());
  }
  while (types.size() < n->args.size()) {
    types.push_back(DataType::Int32());
  }
  n->nullable = true;  // NULL for a bad pattern or group that only shows at run time
  for (size_t i = 0; i < n->args.size(); i++) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, i, types[i]));
  }
  const ExprNode& pattern = *n->args[1];
  if (pattern.is_literal() && !pattern.literal.is_null) {
    std::shared_ptr<const RE2> re = Compile(pattern.literal.s);
    if (!re) {
      RE2 probe(ToRe2Syntax(pattern.literal.s), RE2::Quiet);
      return ctx.Error(pattern, fmt::format("invalid regular expression '{}': {}",
                                            pattern.literal.s, probe.error()));
    }
    if (n->name == "regexp_extract" && n->args.size() > 2 && n->args[2]->is_literal() &&
        n->args[2]->literal.i > re->NumberOfCapturingGroups()) {
      return ctx.Error(*n->args[2],
                       fmt::format("regexp_extract group {} is larger than the "
                                   "{} groups of the pattern",
                                   n->args[2]->literal.i, re->NumberOfCapturingGroups()));
    }
    n->state = re;
  }
  n->type = split ? DataType::List(DataType::String(), false) : DataType::String();
  return Status::OK();
}

// The first match of `re` in s from byte `from`: groups[0] is the whole match.
bool Find(const RE2& re, std::string_view s, size_t from, std::vector<re2::StringPiece>* groups) {
  groups->resize(static_cast<size_t>(re.NumberOfCapturingGroups()) + 1);
  return re.Match(re2::StringPiece(s.data(), s.size()), from, s.size(), RE2::UNANCHORED,
                  groups->data(), static_cast<int>(groups->size()));
}

Vec EvalRegexpExtract(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  RegexSource regex(n, args[1]);
  std::vector<re2::StringPiece> groups;
  ForEachRow(args, ctx, col, [&](int64_t i) {
    const RE2* re = regex.At(i);
    int64_t idx = args.size() > 2 ? args[2].Get<int32_t>(i) : 1;
    if (!re || idx < 0 || idx > re->NumberOfCapturingGroups()) {
      col->AppendNull();
      return;
    }
    std::string_view s = args[0].Str(i);
    if (!Find(*re, s, 0, &groups)) {
      col->Append("");
      return;
    }
    const re2::StringPiece& g = groups[static_cast<size_t>(idx)];
    col->Append(g.data() ? std::string_view(g.data(), g.size()) : std::string_view());
  });
  return out;
}

// Appends Java's replacement text: $n / ${name} group references, \x the character x.
bool AppendReplacement(std::string_view rep, const RE2& re,
                       const std::vector<re2::StringPiece>& groups, std::string* out) {
  for (size_t k = 0; k < rep.size(); k++) {
    char c = rep[k];
    if (c == '\\' && k + 1 < rep.size()) {
      out->push_back(rep[++k]);
    } else if (c == '$') {
      int g = -1;
      if (k + 1 < rep.size() && rep[k + 1] == '{') {
        size_t end = rep.find('}', k);
        if (end == std::string_view::npos) {
          return false;
        }
        auto names = re.NamedCapturingGroups();
        auto it = names.find(std::string(rep.substr(k + 2, end - k - 2)));
        if (it == names.end()) {
          return false;
        }
        g = it->second;
        k = end;
      } else {
        if (k + 1 >= rep.size() || rep[k + 1] < '0' || rep[k + 1] > '9') {
          return false;
        }
        g = rep[++k] - '0';  // Java: more digits while the group exists
        while (k + 1 < rep.size() && rep[k + 1] >= '0' && rep[k + 1] <= '9' &&
               g * 10 + (rep[k + 1] - '0') <= re.NumberOfCapturingGroups()) {
          g = g * 10 + (rep[++k] - '0');
        }
        if (g > re.NumberOfCapturingGroups()) {
          return false;
        }
      }
      const re2::StringPiece& piece = groups[static_cast<size_t>(g)];
      if (piece.data()) {
        out->append(piece.data(), piece.size());
      }
    } else {
      out->push_back(c);
    }
  }
  return true;
}

// Next search start after a match [b, e): e, or one character further for an empty match.
size_t AfterMatch(std::string_view s, size_t b, size_t e) {
  if (e > b || e >= s.size()) {
    return e + (e == b ? 1 : 0);
  }
  size_t p = e;
  NextCodePoint(s, &p);
  return p;
}

Vec EvalRegexpReplace(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  RegexSource regex(n, args[1]);
  std::vector<re2::StringPiece> groups;
  ForEachRow(args, ctx, col, [&](int64_t i) {
    const RE2* re = regex.At(i);
    int64_t position = args.size() > 3 ? args[3].Get<int32_t>(i) : 1;
    if (!re || position < 1) {
      col->AppendNull();
      return;
    }
    std::string_view s = args[0].Str(i);
    std::string_view rep = args[2].Str(i);
    size_t from = CodePointOffset(s, static_cast<size_t>(position - 1));
    std::string result(s.substr(0, from));
    size_t copied = from;
    bool ok = true;
    while (from <= s.size() && Find(*re, s, from, &groups)) {
      auto b = static_cast<size_t>(groups[0].data() - s.data());
      size_t e = b + groups[0].size();
      result.append(s.substr(copied, b - copied));
      ok = ok && AppendReplacement(rep, *re, groups, &result);
      copied = e;
      from = AfterMatch(s, b, e);
    }
    result.append(s.substr(std::min(copied, s.size())));
    ok ? col->Append(result) : col->AppendNull();
  });
  return out;
}

// Java's String.split(regex, limit) with Spark's limit (0 or less: no limit, trailing empty
// strings kept).
Vec EvalSplit(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(n.type, ctx.rows);
  auto* list = out.owned->As<columnar::ListColumn>();
  auto* items = list->mutable_child()->As<BinaryColumn>();
  RegexSource regex(n, args[1]);
  std::vector<re2::StringPiece> groups;
  ForEachRow(args, ctx, list, [&](int64_t i) {
    const RE2* re = regex.At(i);
    if (!re) {
      list->AppendNull();
      return;
    }
    int64_t limit = args.size() > 2 ? args[2].Get<int32_t>(i) : -1;
    std::string_view s = args[0].Str(i);
    size_t index = 0, from = 0;
    int64_t count = 0;
    while ((limit <= 0 || count < limit - 1) && from <= s.size() && Find(*re, s, from, &groups)) {
      auto b = static_cast<size_t>(groups[0].data() - s.data());
      size_t e = b + groups[0].size();
      from = AfterMatch(s, b, e);
      if (b == 0 && e == 0) {
        continue;  // no empty leading piece for an empty match at the start
      }
      if (e == b && b >= s.size()) {
        break;
      }
      items->Append(s.substr(index, b - index));
      index = e;
      count++;
    }
    items->Append(s.substr(index));
    list->FinishRow();
  });
  return out;
}

}  // namespace

void AddStringFunctions(std::vector<FunctionDef>* out) {
  out->push_back(FunctionDef{"concat", 1, 1000, {}, nullptr, AnalyzeConcat, EvalConcat});
  out->push_back(FunctionDef{"concat_ws", 1, 1000, {}, nullptr, AnalyzeConcatWs, EvalConcatWs});
  for (std::string_view name : {"substr", "substring"}) {
    out->push_back(FunctionDef{name,
                               2,
                               3,
                               {DataType::String(), DataType::Int32()},
                               DataType::String(),
                               nullptr,
                               EvalSubstr});
  }
  for (std::string_view name : {"lower", "lcase", "upper", "ucase"}) {
    out->push_back(
        FunctionDef{name, 1, 1, {DataType::String()}, DataType::String(), nullptr, EvalCase});
  }
  for (std::string_view name : {"trim", "ltrim", "rtrim"}) {
    out->push_back(
        FunctionDef{name, 1, 2, {DataType::String()}, DataType::String(), nullptr, EvalTrim});
  }
  for (std::string_view name : {"length", "char_length", "character_length"}) {
    out->push_back(FunctionDef{name, 1, 1, {}, nullptr, AnalyzeLength, EvalLength});
  }
  out->push_back(FunctionDef{"split", 2, 3, {}, nullptr, AnalyzeRegex, EvalSplit});
  out->push_back(FunctionDef{"regexp_extract", 2, 3, {}, nullptr, AnalyzeRegex, EvalRegexpExtract});
  out->push_back(FunctionDef{"regexp_replace", 3, 4, {}, nullptr, AnalyzeRegex, EvalRegexpReplace});
}

}  // namespace ferry::transform
