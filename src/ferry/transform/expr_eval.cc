// Evaluation of an analyzed expression tree over a batch, and the Expression API.
#include <chrono>

#include "ferry/transform/expr_analyzer.h"
#include "ferry/transform/expr_internal.h"
#include "ferry/transform/expr_parser.h"
#include "ferry/transform/expression.h"

namespace ferry::transform {

namespace {

using columnar::Column;

Vec View(const Column* col) {
  Vec v;
  v.col = col;
  return v;
}

Vec LiteralVec(const ExprNode& n) {
  Vec v = NewVec(n.type, 1);
  Column* c = v.owned.get();
  v.constant = true;
  if (n.literal.is_null || !n.type) {
    c->AppendNull();
    return v;
  }
  const LiteralValue& lit = n.literal;
  switch (n.type->id()) {
    case TypeId::kFloat32:
      c->As<columnar::FloatColumn>()->Append(static_cast<float>(lit.d));
      break;
    case TypeId::kFloat64:
      c->As<columnar::DoubleColumn>()->Append(lit.d);
      break;
    case TypeId::kDecimal:
      c->As<columnar::DecimalColumn>()->Append(lit.dec);
      break;
    case TypeId::kString:
    case TypeId::kBinary:
      c->As<columnar::BinaryColumn>()->Append(lit.s);
      break;
    default:
      columnar::VisitPrimitive(n.type->id(), [&]<typename C>(C*) {
        using T = typename C::ValueType;
        if constexpr (std::is_integral_v<T>) {
          c->As<C>()->Append(static_cast<T>(lit.i));
        }
      });
  }
  return v;
}

class Evaluator {
 public:
  explicit Evaluator(const EvalContext& ctx) : ctx_(ctx) {}

  Vec Eval(const ExprNode& n) {
    switch (n.kind) {
      case ExprNode::Kind::kLiteral:
        return LiteralVec(n);
      case ExprNode::Kind::kColumn:
        return View(&ctx_.batch->column(n.column_index));
      case ExprNode::Kind::kGetField:
        return GetField(n);
      case ExprNode::Kind::kGetItem:
        return GetItem(n);
      case ExprNode::Kind::kCast: {
        Vec in = Eval(*n.args[0]);
        Vec out = CastVec(in, n.args[0]->type, n.type, ctx_);
        if (!out.owned && in.owned) {
          return in;  // same type: keep ownership
        }
        return out;
      }
      case ExprNode::Kind::kCase:
        return Case(n);
      case ExprNode::Kind::kIn:
        return In(n);
      case ExprNode::Kind::kIsNull: {
        Vec in = Eval(*n.args[0]);
        int64_t rows = in.constant ? 1 : ctx_.rows;
        Vec out = NewVec(DataType::Boolean(), rows);
        for (int64_t i = 0; i < rows; i++) {
          out.owned->As<columnar::BooleanColumn>()->Append(in.IsNull(i) != n.negated ? 1 : 0);
        }
        out.constant = in.constant;
        return out;
      }
      case ExprNode::Kind::kCall:
        return Call(n);
    }
    return NullVec(n.type, ctx_.rows);
  }

 private:
  Vec Call(const ExprNode& n) {
    std::vector<Vec> args;
    bool all_constant = n.function->foldable;
    for (const ExprPtr& a : n.args) {
      args.push_back(Eval(*a));
      all_constant = all_constant && args.back().constant;
    }
    if (all_constant) {  // evaluated once for every row
      EvalContext one = ctx_;
      one.rows = 1;
      Vec v = n.function->eval(n, args, one);
      v.constant = true;
      return v;
    }
    Vec v = n.function->eval(n, args, ctx_);
    if (v.owned && v.owned->length() == 1 && ctx_.rows != 1) {
      v.constant = true;  // a function that returned one value for all rows (now())
    }
    return v;
  }

  Vec GetField(const ExprNode& n) {
    Vec base = Eval(*n.args[0]);
    const auto* s = base.col->As<columnar::StructColumn>();
    const Column& child = s->child(n.field_index);
    if (base.col->null_count() == 0 && !base.constant) {
      return KeepAlive(std::move(base), View(&child));
    }
    // A null struct makes its fields null whatever the placeholders hold.
    int64_t rows = base.constant ? 1 : ctx_.rows;
    Vec out = NewVec(n.type, rows);
    for (int64_t i = 0; i < rows; i++) {
      base.IsNull(i) ? out.owned->AppendNull() : out.owned->AppendFrom(child, base.Row(i));
    }
    out.constant = base.constant;
    return out;
  }

  // A view into a column owned by `owner` (kept alive in a side list for this evaluation).
  Vec KeepAlive(Vec owner, Vec view) {
    if (owner.owned) {
      keep_.push_back(std::move(owner.owned));
    }
    return view;
  }

  Vec GetItem(const ExprNode& n) {
    Vec base = Eval(*n.args[0]);
    Vec key = Eval(*n.args[1]);
    Vec out = NewVec(n.type, ctx_.rows);
    bool is_list = n.args[0]->type->id() == TypeId::kList;
    for (int64_t i = 0; i < ctx_.rows; i++) {
      if (base.IsNull(i) || key.IsNull(i)) {
        out.owned->AppendNull();
        continue;
      }
      int64_t row = base.Row(i);
      int64_t found = -1;
      const Column* values = nullptr;
      if (is_list) {
        const auto* l = base.col->As<columnar::ListColumn>();
        int64_t idx = key.Get<int32_t>(i);
        if (idx >= 0 && idx < l->ListLength(row)) {
          found = l->offsets()[static_cast<size_t>(row)] + idx;
        }
        values = &l->child();
      } else {
        const auto* m = base.col->As<columnar::MapColumn>();
        Vec keys = View(&m->keys());
        for (int64_t k = m->offsets()[static_cast<size_t>(row)];
             k < m->offsets()[static_cast<size_t>(row) + 1] && found < 0; k++) {
          if (CompareValues(keys, k, key, i, n.args[1]->type) == 0) {
            found = k;
          }
        }
        values = &m->values();
      }
      found < 0 ? out.owned->AppendNull() : out.owned->AppendFrom(*values, found);
    }
    return out;
  }

  Vec Case(const ExprNode& n) {
    std::vector<Vec> parts;
    for (const ExprPtr& a : n.args) {
      parts.push_back(Eval(*a));
    }
    Vec out = NewVec(n.type, ctx_.rows);
    size_t pairs = n.args.size() / 2;
    for (int64_t i = 0; i < ctx_.rows; i++) {
      const Vec* pick = n.has_else ? &parts.back() : nullptr;
      for (size_t k = 0; k < pairs; k++) {
        const Vec& cond = parts[2 * k];
        if (!cond.IsNull(i) && cond.Get<uint8_t>(i) != 0) {
          pick = &parts[2 * k + 1];
          break;
        }
      }
      if (!pick || pick->IsNull(i) || !n.type) {
        out.owned->AppendNull();
      } else {
        out.owned->AppendFrom(*pick->col, pick->Row(i));
      }
    }
    return out;
  }

  Vec In(const ExprNode& n) {
    std::vector<Vec> parts;
    for (const ExprPtr& a : n.args) {
      parts.push_back(Eval(*a));
    }
    Vec out = NewVec(DataType::Boolean(), ctx_.rows);
    auto* col = out.owned->As<columnar::BooleanColumn>();
    const DataTypePtr& t = n.args[0]->type;
    for (int64_t i = 0; i < ctx_.rows; i++) {
      if (parts[0].IsNull(i) || !t) {
        col->AppendNull();
        continue;
      }
      bool found = false, saw_null = false;
      for (size_t k = 1; k < parts.size() && !found; k++) {
        if (parts[k].IsNull(i)) {
          saw_null = true;
        } else {
          found = CompareValues(parts[0], i, parts[k], i, t) == 0;
        }
      }
      if (!found && saw_null) {
        col->AppendNull();  // x IN (.., NULL) is NULL when nothing matched, as in SQL
      } else {
        col->Append(found != n.negated ? 1 : 0);
      }
    }
    return out;
  }

  const EvalContext& ctx_;
  std::vector<std::unique_ptr<Column>> keep_;
};

}  // namespace

Result<std::unique_ptr<Expression>> Expression::Compile(std::string_view text,
                                                        const columnar::Schema& schema,
                                                        ExpressionOptions options) {
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const TimeZone> zone, TimeZone::Load(options.time_zone));
  FERRY_ASSIGN_OR_RETURN(ExprPtr root, ParseExpression(text, options.origin));
  FERRY_RETURN_IF_ERROR(AnalyzeExpression(root.get(), schema, text, options.origin, *zone));
  if (!root->type) {  // a bare NULL: a STRING column of nulls
    auto cast = std::make_unique<ExprNode>();
    cast->kind = ExprNode::Kind::kCast;
    cast->type = cast->cast_type = DataType::String();
    cast->args.push_back(std::move(root));
    root = std::move(cast);
  }
  std::unique_ptr<Expression> e(new Expression());
  e->text_ = std::string(text);
  e->type_ = root->type;
  e->root_ = std::move(root);
  e->zone_ = std::move(zone);
  e->now_ = std::move(options.now);
  return e;
}

Expression::~Expression() = default;

bool Expression::nullable() const {
  return root_->nullable;
}

std::unique_ptr<columnar::Column> Expression::Evaluate(const columnar::RecordBatch& batch) const {
  EvalContext ctx;
  ctx.rows = batch.num_rows();
  ctx.batch = &batch;
  ctx.zone = zone_.get();
  ctx.now_micros = now_ ? now_()
                        : std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  Evaluator evaluator(ctx);
  Vec v = evaluator.Eval(*root_);
  if (v.owned && !v.constant && v.owned->length() == ctx.rows) {
    return std::move(v.owned);
  }
  // A constant, or a view of an input column: copy out one value per row.
  std::unique_ptr<Column> out = columnar::MakeColumn(type_);
  out->Reserve(ctx.rows);
  for (int64_t i = 0; i < ctx.rows; i++) {
    out->AppendFrom(*v.col, v.Row(i));
  }
  return out;
}

std::vector<int64_t> Expression::TrueRows(const columnar::Column& condition) {
  std::vector<int64_t> rows;
  const auto* b = condition.As<columnar::BooleanColumn>();
  for (int64_t i = 0; i < b->length(); i++) {
    if (b->IsValid(i) && b->Value(i) != 0) {
      rows.push_back(i);
    }
  }
  return rows;
}

}  // namespace ferry::transform
