#include "ferry/transform/expr_analyzer.h"

#include <fmt/format.h>

#include "ferry/transform/expr_internal.h"
#include "ferry/transform/expr_parser.h"

namespace ferry::transform {

Status AnalyzeContext::Error(const ExprNode& node, std::string_view message) const {
  return ExpressionError(origin_, text_, node.pos, message);
}

Status AnalyzeContext::CastArg(ExprNode* node, size_t i, const DataTypePtr& to) const {
  ExprPtr& arg = node->args[i];
  if (!to || (arg->type && arg->type->Equals(*to))) {
    return Status::OK();
  }
  if (!CanImplicitCast(arg->type, to)) {
    return Error(*arg, fmt::format("{} expects {} for argument {}, not {}", node->name,
                                   TypeName(to), i + 1, TypeName(arg->type)));
  }
  auto cast = std::make_unique<ExprNode>();
  cast->kind = ExprNode::Kind::kCast;
  cast->pos = arg->pos;
  cast->cast_type = to;
  cast->type = to;
  // Casting a non-null value may still fail ("abc" to INT, an overflowing DECIMAL) and give
  // NULL; integral to non-decimal numbers (narrowing wraps), FLOAT to DOUBLE and anything to
  // STRING never do.
  bool never_null =
      (IsIntegral(arg->type) && IsNumeric(to) && to->id() != TypeId::kDecimal) ||
      (arg->type && arg->type->id() == TypeId::kFloat32 && to->id() == TypeId::kFloat64) ||
      (arg->type && IsStringLike(to));
  cast->nullable = arg->nullable || !never_null;
  cast->args.push_back(std::move(arg));
  arg = std::move(cast);
  return Status::OK();
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// Index of `name` among `fields`: exact match first, then a unique case-insensitive one.
// -1 when absent, -2 when ambiguous.
int ResolveName(const std::vector<columnar::Field>& fields, std::string_view name) {
  for (size_t i = 0; i < fields.size(); i++) {
    if (fields[i].name == name) {
      return static_cast<int>(i);
    }
  }
  int found = -1;
  std::string lower = Lower(name);
  for (size_t i = 0; i < fields.size(); i++) {
    if (Lower(fields[i].name) == lower) {
      if (found >= 0) {
        return -2;
      }
      found = static_cast<int>(i);
    }
  }
  return found;
}

std::string NameList(const std::vector<columnar::Field>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size() && i < 12; i++) {
    out += (i ? ", " : "") + fields[i].name;
  }
  return fields.size() > 12 ? out + ", ..." : out;
}

class Analyzer {
 public:
  Analyzer(const columnar::Schema& schema, AnalyzeContext* ctx) : schema_(schema), ctx_(*ctx) {}

  Status Analyze(ExprNode* n) {
    for (size_t k = 0; k < n->args.size(); k++) {
      FERRY_RETURN_IF_ERROR(Analyze(n->args[k].get()));
      // Functions see microsecond timestamps only: TIMESTAMP_MILLIS and the like convert here.
      const DataTypePtr& t = n->args[k]->type;
      if (t && t->id() == TypeId::kTimestamp && t->unit() != columnar::TimeUnit::kMicros) {
        FERRY_RETURN_IF_ERROR(
            CastTo(n, k, DataType::Timestamp(columnar::TimeUnit::kMicros, t->utc_adjusted())));
      }
    }
    switch (n->kind) {
      case ExprNode::Kind::kLiteral:
        n->nullable = n->literal.is_null;
        return Status::OK();
      case ExprNode::Kind::kColumn:
        return Column(n);
      case ExprNode::Kind::kGetField:
        return GetField(n);
      case ExprNode::Kind::kGetItem:
        return GetItem(n);
      case ExprNode::Kind::kCast:
        return Cast(n);
      case ExprNode::Kind::kCase:
        return Case(n);
      case ExprNode::Kind::kIn:
        return In(n);
      case ExprNode::Kind::kIsNull:
        n->type = DataType::Boolean();
        n->nullable = false;
        return Status::OK();
      case ExprNode::Kind::kCall:
        return Call(n);
    }
    return Status::OK();
  }

 private:
  Status Column(ExprNode* n) {
    int i = ResolveName(schema_.fields(), n->name);
    if (i == -2) {
      return ctx_.Error(*n, fmt::format("column name '{}' is ambiguous", n->name));
    }
    if (i < 0) {
      return ctx_.Error(*n, fmt::format("unknown column '{}' (columns: {})", n->name,
                                        NameList(schema_.fields())));
    }
    const columnar::Field& f = schema_.field(i);
    n->column_index = i;
    n->type = f.type;
    n->nullable = f.nullable;
    return Status::OK();
  }

  Status GetField(ExprNode* n) {
    const ExprNode& base = *n->args[0];
    if (!base.type || base.type->id() != TypeId::kStruct) {
      return ctx_.Error(*n, fmt::format("cannot read field '{}' of {}: not a struct", n->name,
                                        TypeName(base.type)));
    }
    int i = ResolveName(base.type->fields(), n->name);
    if (i < 0) {
      return ctx_.Error(*n, fmt::format("no field '{}' in {}", n->name, base.type->ToString()));
    }
    const columnar::Field& f = base.type->fields()[static_cast<size_t>(i)];
    n->field_index = i;
    n->type = f.type;
    n->nullable = base.nullable || f.nullable;
    return Status::OK();
  }

  Status GetItem(ExprNode* n) {
    const DataTypePtr& t = n->args[0]->type;
    if (t && t->id() == TypeId::kList) {
      FERRY_RETURN_IF_ERROR(ctx_.CastArg(n, 1, DataType::Int32()));
      n->type = t->element().type;
    } else if (t && t->id() == TypeId::kMap) {
      FERRY_RETURN_IF_ERROR(ctx_.CastArg(n, 1, t->key().type));
      n->type = t->value().type;
    } else {
      return ctx_.Error(*n, fmt::format("cannot subscript {}: not an array or map", TypeName(t)));
    }
    n->nullable = true;
    return Status::OK();
  }

  Status Cast(ExprNode* n) {
    const DataTypePtr& from = n->args[0]->type;
    if (!CanCast(from, n->cast_type)) {
      return ctx_.Error(
          *n, fmt::format("cannot cast {} to {}", TypeName(from), n->cast_type->ToString()));
    }
    n->type = n->cast_type;
    n->nullable = true;
    if (n->name == "literal") {  // DATE '...', TIMESTAMP '...': the text must be valid
      EvalContext ec{1, nullptr, &ctx_.zone(), 0};
      Vec lit = NewVec(DataType::String(), 1);
      lit.owned->As<columnar::BinaryColumn>()->Append(n->args[0]->literal.s);
      lit.constant = true;
      Vec out = CastVec(lit, DataType::String(), n->type, ec);
      if (out.IsNull(0)) {
        return ctx_.Error(
            *n, fmt::format("invalid {} literal '{}'", n->type->ToString(), n->args[0]->literal.s));
      }
      n->nullable = false;
    }
    return Status::OK();
  }

  Status Case(ExprNode* n) {
    DataTypePtr result;
    bool first = true;
    for (size_t k = 0; k < n->args.size(); k++) {
      bool is_value = (k % 2 == 1) || (n->has_else && k + 1 == n->args.size());
      if (!is_value) {
        FERRY_RETURN_IF_ERROR(Condition(n, k, "WHEN"));
        continue;
      }
      const ExprNode& v = *n->args[k];
      DataTypePtr wider = first ? v.type : WiderType(result, v.type);
      if (!first && !wider && (result || v.type)) {
        return ctx_.Error(v, fmt::format("CASE branches have incompatible types {} and {}",
                                         TypeName(result), TypeName(v.type)));
      }
      result = wider;
      first = false;
    }
    n->type = result;
    n->nullable = !n->has_else;
    for (size_t k = 0; k < n->args.size(); k++) {
      if ((k % 2 == 1) || (n->has_else && k + 1 == n->args.size())) {
        FERRY_RETURN_IF_ERROR(CastTo(n, k, result));
        n->nullable = n->nullable || n->args[k]->nullable;
      }
    }
    return Status::OK();
  }

  Status Condition(ExprNode* n, size_t k, std::string_view where) {
    const DataTypePtr& t = n->args[k]->type;
    if (t && t->id() != TypeId::kBoolean) {
      return ctx_.Error(*n->args[k],
                        fmt::format("{} condition must be BOOLEAN, not {}", where, TypeName(t)));
    }
    return Status::OK();
  }

  // An explicit cast node to `to` (the types are known to be compatible).
  static Status CastTo(ExprNode* n, size_t k, const DataTypePtr& to) {
    ExprPtr& arg = n->args[k];
    if (!to || (arg->type && arg->type->Equals(*to))) {
      return Status::OK();
    }
    auto cast = std::make_unique<ExprNode>();
    cast->kind = ExprNode::Kind::kCast;
    cast->pos = arg->pos;
    cast->cast_type = to;
    cast->type = to;
    cast->nullable = true;
    cast->args.push_back(std::move(arg));
    arg = std::move(cast);
    return Status::OK();
  }

  Status In(ExprNode* n) {
    DataTypePtr common = n->args[0]->type;
    for (size_t k = 1; k < n->args.size(); k++) {
      DataTypePtr c = ComparisonType(common, n->args[k]->type);
      if (!c && (common || n->args[k]->type)) {
        return ctx_.Error(*n->args[k], fmt::format("IN compares {} with {}", TypeName(common),
                                                   TypeName(n->args[k]->type)));
      }
      common = c;
    }
    n->nullable = false;
    for (size_t k = 0; k < n->args.size(); k++) {
      FERRY_RETURN_IF_ERROR(CastTo(n, k, common));
      n->nullable = n->nullable || n->args[k]->nullable;
    }
    n->type = DataType::Boolean();
    return Status::OK();
  }

  Status Call(ExprNode* n) {
    const FunctionDef* f = FindFunction(n->name);
    if (!f) {
      return ctx_.Error(*n, fmt::format("unknown function '{}'", n->name));
    }
    auto argc = static_cast<int>(n->args.size());
    if (argc < f->min_args || argc > f->max_args) {
      std::string expected = f->min_args == f->max_args
                                 ? fmt::format("{}", f->min_args)
                                 : fmt::format("{} to {}", f->min_args, f->max_args);
      return ctx_.Error(*n, fmt::format("{} takes {} arguments, not {}", n->name, expected, argc));
    }
    n->function = f;
    if (f->analyze) {
      return f->analyze(n, ctx_);
    }
    n->nullable = false;
    for (size_t i = 0; i < n->args.size(); i++) {
      if (!f->arg_types.empty()) {
        FERRY_RETURN_IF_ERROR(
            ctx_.CastArg(n, i, f->arg_types[std::min(i, f->arg_types.size() - 1)]));
      }
      n->nullable = n->nullable || n->args[i]->nullable;
    }
    n->type = f->result;
    return Status::OK();
  }

  const columnar::Schema& schema_;
  AnalyzeContext& ctx_;
};

}  // namespace

Status AnalyzeExpression(ExprNode* root, const columnar::Schema& schema, std::string_view text,
                         std::string_view origin, const TimeZone& zone) {
  AnalyzeContext ctx(text, origin, &zone);
  return Analyzer(schema, &ctx).Analyze(root);
}

}  // namespace ferry::transform
