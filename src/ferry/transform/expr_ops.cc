// Operators: arithmetic (+ - * / % div, unary -), comparisons (= != < <= > >= <=>), AND, OR,
// NOT and LIKE, with Spark's non-ANSI typing: integral arithmetic wraps on overflow, `/` is a
// DOUBLE division (or a DECIMAL one for decimals), division or remainder by zero is NULL,
// decimal results follow Spark's precision rules and are NULL when they overflow, strings in
// arithmetic count as DOUBLE, NaN equals NaN and sorts above every other number.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ferry/transform/decimal_math.h"
#include "ferry/transform/expr_internal.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform {

namespace {

using columnar::Column;

bool IsDecimal(const DataTypePtr& t) {
  return t && t->id() == TypeId::kDecimal;
}
bool IsFloating(const DataTypePtr& t) {
  return t && (t->id() == TypeId::kFloat32 || t->id() == TypeId::kFloat64);
}

// Spark's DecimalPrecision with allowPrecisionLoss: results wider than 38 digits keep their
// integral digits and give up scale down to min(scale, 6).
DataTypePtr BoundedDecimal(int precision, int scale) {
  if (precision <= 38) {
    return DataType::Decimal(precision, scale);
  }
  int int_digits = precision - scale;
  int min_scale = std::min(scale, 6);
  int adjusted = std::max(38 - int_digits, min_scale);
  return DataType::Decimal(38, adjusted);
}

DataTypePtr DecimalResult(std::string_view op, const DataTypePtr& a, const DataTypePtr& b) {
  int p1 = a->precision(), s1 = a->scale(), p2 = b->precision(), s2 = b->scale();
  if (op == "+" || op == "-") {
    int s = std::max(s1, s2);
    return BoundedDecimal(std::max(p1 - s1, p2 - s2) + s + 1, s);
  }
  if (op == "*") {
    return BoundedDecimal(p1 + p2 + 1, s1 + s2);
  }
  if (op == "/") {
    int s = std::max(6, s1 + p2 + 1);
    return BoundedDecimal(p1 - s1 + s2 + s, s);
  }
  int s = std::max(s1, s2);  // %
  return BoundedDecimal(std::min(p1 - s1, p2 - s2) + s, s);
}

// Casts the operands and sets the result type of an arithmetic operator (a, b: the operand
// types, strings already counted as DOUBLE).
Status TypeArithmetic(ExprNode* n, AnalyzeContext& ctx, const DataTypePtr& a,
                      const DataTypePtr& b) {
  const std::string& op = n->name;
  DataTypePtr common = WiderNumeric(a, b);
  if (op == "negative") {
    n->type = a;
    return ctx.CastArg(n, 0, a);
  }
  if (op == "div") {
    DataTypePtr t = IsFloating(common) ? DataType::Int64() : common;
    n->type = DataType::Int64();
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, t));
    return ctx.CastArg(n, 1, t);
  }
  if (IsDecimal(common)) {
    DataTypePtr da = AsDecimal(a), db = AsDecimal(b);
    n->type = DecimalResult(op, da, db);
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, da));
    return ctx.CastArg(n, 1, db);
  }
  n->type = op == "/" ? DataType::Float64() : common;
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, n->type));
  return ctx.CastArg(n, 1, n->type);
}

Status AnalyzeArithmetic(ExprNode* n, AnalyzeContext& ctx) {
  const std::string& op = n->name;
  std::vector<DataTypePtr> types;
  for (size_t i = 0; i < n->args.size(); i++) {
    DataTypePtr t = n->args[i]->type;
    if (IsStringLike(t)) {
      t = DataType::Float64();  // Spark's PromoteStrings
    } else if (t && !IsNumeric(t)) {
      return ctx.Error(*n, fmt::format("operator {} needs numbers, not {}",
                                       op == "negative" ? "-" : op, TypeName(t)));
    }
    types.push_back(t);
  }
  DataTypePtr a =
      types[0] ? types[0] : (types.size() > 1 && types[1] ? types[1] : DataType::Int32());
  DataTypePtr b = types.size() > 1 && types[1] ? types[1] : a;
  FERRY_RETURN_IF_ERROR(TypeArithmetic(n, ctx, a, b));
  // Division and remainder by zero, and decimal overflow, give NULL.
  n->nullable = op == "/" || op == "%" || op == "div" || IsDecimal(n->type);
  for (const ExprPtr& arg : n->args) {  // after the casts, which may add NULLs
    n->nullable = n->nullable || arg->nullable;
  }
  return Status::OK();
}

// Integral arithmetic in two's complement, wrapping like Java.
template <typename T>
bool IntegralOp(std::string_view op, T x, T y, T* out) {
  // Unsigned arithmetic wraps; types narrower than int would be promoted to (signed) int first,
  // where 65534 * 65534 overflows, so they are widened to unsigned int instead.
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  if (op == "+") {
    *out = static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else if (op == "-") {
    *out = static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
  } else if (op == "*") {
    *out = static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
  } else {  // %
    if (y == 0) {
      return false;
    }
    if constexpr (std::is_signed_v<T>) {
      if (y == -1) {
        *out = 0;
        return true;
      }
    }
    *out = static_cast<T>(x % y);
  }
  return true;
}

std::optional<Int128> DecimalOp(std::string_view op, Int128 x, int s1, Int128 y, int s2,
                                const DataTypePtr& result) {
  int s = result->scale(), p = result->precision();
  std::optional<Int128> r;
  if (op == "+" || op == "-" || op == "%") {
    int common = std::max(s1, s2);
    std::optional<Int128> ax = Rescale(x, s1, common, 38), ay = Rescale(y, s2, common, 38);
    if (!ax || !ay) {
      return std::nullopt;
    }
    if (op == "%") {
      if (*ay == 0) {
        return std::nullopt;
      }
      r = *ax % *ay;
    } else {
      Int128 v = op == "+" ? *ax + *ay : *ax - *ay;  // |v| < 2 * 10^38: no overflow
      r = v;
    }
    return r ? Rescale(*r, common, s, p) : r;
  }
  if (op == "*") {
    r = MulDivRound(x, y, static_cast<Int128>(Pow10(s1 + s2 - s)));
  } else {  // "/": x / y at scale s = x * 10^(s - s1 + s2) / y
    int k = s - s1 + s2;
    if (y == 0 || k > 38 || k < 0) {
      return std::nullopt;
    }
    r = MulDivRound(x, static_cast<Int128>(Pow10(k)), y);
  }
  if (r && !FitsPrecision(*r, p)) {
    return std::nullopt;
  }
  return r;
}

Vec EvalArithmetic(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  const DataTypePtr& t = n.type;
  Vec out = NewVec(t, ctx.rows);
  Column* col = out.owned.get();
  std::string_view op = n.name;
  if (op == "negative") {
    ForEachRow(args, ctx, col, [&](int64_t i) {
      if (IsDecimal(t)) {
        col->As<columnar::DecimalColumn>()->Append(-args[0].Get<Int128>(i));
        return;
      }
      columnar::VisitPrimitive(t->id(), [&]<typename C>(C*) {
        using T = typename C::ValueType;
        T r{};
        if constexpr (std::is_integral_v<T>) {
          IntegralOp<T>("-", T{0}, args[0].Get<T>(i), &r);
        } else {
          r = -args[0].Get<T>(i);
        }
        col->As<C>()->Append(r);
      });
    });
    return out;
  }
  const DataTypePtr& lt = n.args[0]->type;
  const DataTypePtr& rt = n.args[1]->type;
  ForEachRow(args, ctx, col, [&](int64_t i) {
    if (op == "div") {
      int64_t r = 0;
      bool ok = false;
      if (IsDecimal(lt)) {
        Int128 x = args[0].Get<Int128>(i), y = args[1].Get<Int128>(i);
        std::optional<Int128> ax = Rescale(x, lt->scale(), std::max(lt->scale(), rt->scale()), 38);
        std::optional<Int128> ay = Rescale(y, rt->scale(), std::max(lt->scale(), rt->scale()), 38);
        if (ax && ay && *ay != 0) {
          Int128 v = *ax / *ay;
          ok = v >= INT64_MIN && v <= INT64_MAX;
          r = static_cast<int64_t>(v);
        }
      } else {
        columnar::VisitPrimitive(lt->id(), [&]<typename C>(C*) {
          using T = typename C::ValueType;
          if constexpr (std::is_integral_v<T>) {
            auto x = static_cast<int64_t>(args[0].Get<T>(i)),
                 y = static_cast<int64_t>(args[1].Get<T>(i));
            ok = y != 0;
            r = !ok ? 0 : (x == INT64_MIN && y == -1) ? INT64_MIN : x / y;
          }
        });
      }
      ok ? col->As<columnar::Int64Column>()->Append(r) : col->AppendNull();
      return;
    }
    if (IsDecimal(t)) {
      std::optional<Int128> r = DecimalOp(op, args[0].Get<Int128>(i), lt->scale(),
                                          args[1].Get<Int128>(i), rt->scale(), t);
      r ? col->As<columnar::DecimalColumn>()->Append(*r) : col->AppendNull();
      return;
    }
    columnar::VisitPrimitive(t->id(), [&]<typename C>(C*) {
      using T = typename C::ValueType;
      T x = args[0].Get<T>(i), y = args[1].Get<T>(i), r{};
      bool ok = true;
      if constexpr (std::is_integral_v<T>) {
        ok = IntegralOp<T>(op, x, y, &r);
      } else {
        if ((op == "/" || op == "%") && y == 0) {
          ok = false;
        } else {
          r = op == "+"   ? x + y
              : op == "-" ? x - y
              : op == "*" ? x * y
              : op == "/"
                  ? x / y
                  : static_cast<T>(std::fmod(static_cast<double>(x), static_cast<double>(y)));
        }
      }
      ok ? col->As<C>()->Append(r) : col->AppendNull();
    });
  });
  return out;
}

// --- Comparisons -------------------------------------------------------------------------------

Status AnalyzeComparison(ExprNode* n, AnalyzeContext& ctx) {
  DataTypePtr a = n->args[0]->type, b = n->args[1]->type;
  DataTypePtr t = ComparisonType(a, b);
  if (!t || t->is_nested()) {
    return ctx.Error(*n, fmt::format("cannot compare {} with {}", TypeName(a), TypeName(b)));
  }
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, t));
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 1, t));
  n->type = DataType::Boolean();
  n->nullable = n->name != "<=>" && (n->args[0]->nullable || n->args[1]->nullable);
  return Status::OK();
}

template <typename T>
int Cmp(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) {
      return nx == ny ? 0 : nx ? 1 : -1;  // NaN = NaN, NaN above everything
    }
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

}  // namespace

int CompareValues(const Vec& a, int64_t i, const Vec& b, int64_t j, const DataTypePtr& t) {
  if (t->is_binary_like()) {
    return Cmp(a.Str(i), b.Str(j));
  }
  int r = 0;
  columnar::VisitPrimitive(t->id(), [&]<typename C>(C*) {
    using T = typename C::ValueType;
    r = Cmp(a.Get<T>(i), b.Get<T>(j));
  });
  return r;
}

namespace {

Vec EvalComparison(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::Boolean(), ctx.rows);
  auto* col = out.owned->As<columnar::BooleanColumn>();
  const DataTypePtr& t = n.args[0]->type ? n.args[0]->type : n.args[1]->type;
  std::string_view op = n.name;
  for (int64_t i = 0; i < ctx.rows; i++) {
    bool na = args[0].IsNull(i), nb = args[1].IsNull(i);
    if (na || nb) {
      op == "<=>" ? col->Append(na && nb ? 1 : 0) : col->AppendNull();
      continue;
    }
    int c = CompareValues(args[0], i, args[1], i, t);
    bool r = op == "=" || op == "<=>" ? c == 0
             : op == "!="             ? c != 0
             : op == "<"              ? c < 0
             : op == "<="             ? c <= 0
             : op == ">"              ? c > 0
                                      : c >= 0;
    col->Append(r ? 1 : 0);
  }
  return out;
}

// --- Logic -------------------------------------------------------------------------------------

Status AnalyzeLogic(ExprNode* n, AnalyzeContext& ctx) {
  n->nullable = false;
  for (const ExprPtr& a : n->args) {
    if (a->type && a->type->id() != TypeId::kBoolean) {
      return ctx.Error(
          *a, fmt::format("{} needs BOOLEAN operands, not {}", n->name, TypeName(a->type)));
    }
    n->nullable = n->nullable || a->nullable;
  }
  n->type = DataType::Boolean();
  return Status::OK();
}

// Three-valued logic: -1 for NULL, else 0 / 1.
int Truth(const Vec& v, int64_t i) {
  return v.IsNull(i) ? -1 : (v.Get<uint8_t>(i) != 0 ? 1 : 0);
}

Vec EvalLogic(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::Boolean(), ctx.rows);
  auto* col = out.owned->As<columnar::BooleanColumn>();
  for (int64_t i = 0; i < ctx.rows; i++) {
    int a = Truth(args[0], i);
    int r = 0;
    if (n.name == "not") {
      r = a < 0 ? -1 : 1 - a;
    } else {
      int b = Truth(args[1], i);
      if (n.name == "and") {
        r = (a == 0 || b == 0) ? 0 : (a < 0 || b < 0) ? -1 : 1;
      } else {
        r = (a == 1 || b == 1) ? 1 : (a < 0 || b < 0) ? -1 : 0;
      }
    }
    r < 0 ? col->AppendNull() : col->Append(static_cast<uint8_t>(r));
  }
  return out;
}

// SQL LIKE: % any sequence, _ one character, \ escapes the next character.
bool Like(std::string_view s, std::string_view p) {
  size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '%') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < p.size() && p[pi] != '%') {
      bool escaped = p[pi] == '\\' && pi + 1 < p.size();
      size_t pc = escaped ? pi + 1 : pi;
      size_t plen = 1, slen = 1;
      while (pc + plen < p.size() && (static_cast<uint8_t>(p[pc + plen]) & 0xC0) == 0x80) {
        plen++;
      }
      while (si + slen < s.size() && (static_cast<uint8_t>(s[si + slen]) & 0xC0) == 0x80) {
        slen++;
      }
      if ((!escaped && p[pc] == '_') || s.substr(si, slen) == p.substr(pc, plen)) {
        si += slen;
        pi = pc + plen;
        continue;
      }
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    pi = star_p;
    star_s += 1;
    while (star_s < s.size() && (static_cast<uint8_t>(s[star_s]) & 0xC0) == 0x80) {
      star_s++;
    }
    si = star_s;
  }
  while (pi < p.size() && p[pi] == '%') {
    pi++;
  }
  return pi == p.size();
}

Vec EvalLike(const ExprNode&, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::Boolean(), ctx.rows);
  auto* col = out.owned->As<columnar::BooleanColumn>();
  ForEachRow(args, ctx, col,
             [&](int64_t i) { col->Append(Like(args[0].Str(i), args[1].Str(i)) ? 1 : 0); });
  return out;
}

}  // namespace

void AddOperatorFunctions(std::vector<FunctionDef>* out) {
  for (std::string_view op : {"+", "-", "*", "/", "%", "div"}) {
    out->push_back(FunctionDef{op, 2, 2, {}, nullptr, AnalyzeArithmetic, EvalArithmetic});
  }
  out->push_back(FunctionDef{"negative", 1, 1, {}, nullptr, AnalyzeArithmetic, EvalArithmetic});
  for (std::string_view op : {"=", "!=", "<", "<=", ">", ">=", "<=>"}) {
    out->push_back(FunctionDef{op, 2, 2, {}, nullptr, AnalyzeComparison, EvalComparison});
  }
  out->push_back(FunctionDef{"and", 2, 2, {}, nullptr, AnalyzeLogic, EvalLogic});
  out->push_back(FunctionDef{"or", 2, 2, {}, nullptr, AnalyzeLogic, EvalLogic});
  out->push_back(FunctionDef{"not", 1, 1, {}, nullptr, AnalyzeLogic, EvalLogic});
  out->push_back(
      FunctionDef{"like", 2, 2, {DataType::String()}, DataType::Boolean(), nullptr, EvalLike});
}

}  // namespace ferry::transform
