#include "ferry/pipeline/table_rules.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "ferry/columnar/ddl.h"

namespace ferry::pipeline {

struct TableRules::Fill {
  int column = 0;
  std::string name;
  std::string expression;
  bool generated = false;
  std::unique_ptr<transform::Expression> value;     // CAST((expr) AS <column type>)
  std::unique_ptr<transform::Expression> agrees;    // `col` <=> value (generated only)
  std::unique_ptr<transform::Expression> supplied;  // CAST(`col` AS STRING) (generated only)
  std::unique_ptr<transform::Expression> expected;  // CAST(value AS STRING) (generated only)
};

struct TableRules::Check {
  std::string name;
  std::string expression;
  std::unique_ptr<transform::Expression> condition;
};

struct TableRules::NestedNotNull {
  std::string name;          // dotted path
  std::vector<int> indexes;  // the top-level column, then the field in each struct
};

namespace {

std::string Quoted(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    out += c == '`' ? "``" : std::string(1, c);
  }
  return out + "`";
}

bool HasKey(const columnar::Field& field, std::string_view prefix) {
  for (const auto& [key, value] : field.metadata) {
    if (key.rfind(prefix, 0) == 0) {
      return true;
    }
  }
  return false;
}

// The text in a value column at `row` (NULL for a null).
std::string Text(const columnar::Column& column, int64_t row) {
  if (column.IsNull(row)) {
    return "NULL";
  }
  return std::string(column.As<columnar::BinaryColumn>()->Value(row));
}

}  // namespace

TableRules::~TableRules() = default;

bool FilledByTable(const columnar::Field& field) {
  return HasKey(field, delta::kGenerationExpressionKey) ||
         HasKey(field, delta::kCurrentDefaultKey) || HasKey(field, delta::kIdentityStartKey);
}

Result<std::unique_ptr<TableRules>> TableRules::Create(const delta::ColumnRules& rules,
                                                       const columnar::Schema& input,
                                                       const std::string& time_zone) {
  auto out = std::unique_ptr<TableRules>(new TableRules());
  // ColumnRules::empty() leaves out the nested NOT NULL fields, which CompleteRow checks in
  // place without a copy of the row.
  out->empty_ = rules.empty();
  out->key_ = rules.Key();
  auto compile =
      [&](const std::string& text, const std::string& what,
          const std::string& expression) -> Result<std::unique_ptr<transform::Expression>> {
    Result<std::unique_ptr<transform::Expression>> e =
        transform::Expression::Compile(text, input, {.time_zone = time_zone, .origin = what});
    if (!e.ok()) {
      return NotSupported(
          "{} ({}) cannot be evaluated by ferry: {}; ferry refuses to write rather than ignore it",
          what, expression, e.status().message());
    }
    return e;
  };
  auto column_index = [&](const std::string& column, const std::string& what) -> Result<int> {
    std::optional<int> i = input.FieldIndex(column);
    if (!i) {
      return NotSupported("{}: column '{}' is not a column ferry decodes", what, column);
    }
    return *i;
  };
  auto add_fill = [&](const delta::ColumnExpression& rule, bool generated) -> Status {
    const std::string what = fmt::format(
        "{} of column '{}'", generated ? "generation expression" : "default", rule.column);
    FERRY_ASSIGN_OR_RETURN(int i, column_index(rule.column, what));
    const columnar::Field& field = input.field(i);
    const std::string value =
        fmt::format("CAST(({}) AS {})", rule.expression, field.type->ToString());
    Fill fill{
        .column = i, .name = rule.column, .expression = rule.expression, .generated = generated};
    FERRY_ASSIGN_OR_RETURN(fill.value, compile(value, what, rule.expression));
    if (generated) {
      FERRY_ASSIGN_OR_RETURN(fill.agrees,
                             compile(Quoted(rule.column) + " <=> " + value, what, rule.expression));
      FERRY_ASSIGN_OR_RETURN(
          fill.supplied,
          compile(fmt::format("CAST({} AS STRING)", Quoted(rule.column)), what, rule.expression));
      FERRY_ASSIGN_OR_RETURN(
          fill.expected, compile(fmt::format("CAST({} AS STRING)", value), what, rule.expression));
    }
    out->fills_.push_back(std::move(fill));
    if (!field.nullable) {
      out->not_null_.push_back(i);
    }
    return Status::OK();
  };
  for (const delta::ColumnExpression& d : rules.defaults) {
    FERRY_RETURN_IF_ERROR(add_fill(d, /*generated=*/false));
  }
  for (const delta::ColumnExpression& g : rules.generated) {
    FERRY_RETURN_IF_ERROR(add_fill(g, /*generated=*/true));
  }
  for (const delta::IdentityColumn& id : rules.identity) {
    FERRY_ASSIGN_OR_RETURN(int i, column_index(id.column, "identity column"));
    if (!id.allow_explicit_insert) {
      out->explicit_refused_.push_back(i);
      out->explicit_refused_names_.push_back(id.column);
    }
  }
  for (const delta::RowCheck& c : rules.checks) {
    const std::string what = fmt::format("constraint '{}'", c.name);
    Check check{.name = c.name, .expression = c.expression};
    FERRY_ASSIGN_OR_RETURN(check.condition, compile(c.expression, what, c.expression));
    if (check.condition->type()->id() != columnar::TypeId::kBoolean) {
      return NotSupported("{} ({}) is {}, not BOOLEAN", what, c.expression,
                          check.condition->type()->ToString());
    }
    out->checks_.push_back(std::move(check));
  }
  for (const std::vector<std::string>& path : rules.not_null) {
    NestedNotNull field;
    const columnar::Field* at = nullptr;
    for (const std::string& part : path) {
      field.name += (field.name.empty() ? "" : ".") + part;
      std::optional<int> i;
      if (at == nullptr) {
        i = input.FieldIndex(part);
      } else if (at->type->id() == columnar::TypeId::kStruct) {
        const std::vector<columnar::Field>& fields = at->type->fields();
        for (size_t k = 0; k < fields.size() && !i; ++k) {
          if (fields[k].name == part) {
            i = static_cast<int>(k);
          }
        }
      }
      if (!i) {
        return NotSupported("NOT NULL field '{}' is not a field ferry decodes",
                            fmt::format("{}", fmt::join(path, ".")));
      }
      at = at == nullptr ? &input.field(*i) : &at->type->fields()[static_cast<size_t>(*i)];
      field.indexes.push_back(*i);
    }
    out->nested_not_null_.push_back(std::move(field));
  }
  return out;
}

Status TableRules::CompleteRow(columnar::RecordBatch* rows, int64_t row) const {
  // Nested NOT NULL first, straight on the columns (a struct's children hold a placeholder for
  // each null row, so a row index is valid at every depth). A NULL struct on the path holds no
  // field to check: the row passes (an optional Avro record or Protobuf message with required
  // fields decodes to such a struct). Spark's writer is stricter and refuses the row; readers
  // read a NULL struct either way (docs/delta.md).
  for (const NestedNotNull& field : nested_not_null_) {
    const columnar::Column* column = &rows->column(field.indexes[0]);
    bool parent_null = false;
    for (size_t k = 1; k < field.indexes.size(); ++k) {
      if (column->IsNull(row)) {
        parent_null = true;
        break;
      }
      column = &column->As<columnar::StructColumn>()->child(field.indexes[k]);
    }
    if (!parent_null && column->IsNull(row)) {
      return InvalidArgument(
          "the row violates the NOT NULL constraint on column '{}': it is NULL in a present "
          "struct",
          field.name);
    }
  }
  if (empty_) {
    return Status::OK();
  }
  const int64_t index[] = {row};
  columnar::RecordBatch one = rows->Take(index);
  for (size_t k = 0; k < explicit_refused_.size(); ++k) {
    if (one.column(explicit_refused_[k]).IsValid(0)) {
      return InvalidArgument(
          "identity column '{}' is GENERATED ALWAYS (delta.identity.allowExplicitInsert is "
          "false): the message supplies a value",
          explicit_refused_names_[k]);
    }
  }
  for (const Fill& fill : fills_) {
    if (one.column(fill.column).IsValid(0)) {
      if (fill.generated && transform::Expression::TrueRows(*fill.agrees->Evaluate(one)).empty()) {
        return InvalidArgument(
            "generated column '{}': the message supplies {} but its generation expression ({}) "
            "gives {}",
            fill.name, Text(*fill.supplied->Evaluate(one), 0), fill.expression,
            Text(*fill.expected->Evaluate(one), 0));
      }
      continue;
    }
    std::unique_ptr<columnar::Column> value = fill.value->Evaluate(one);
    for (columnar::RecordBatch* batch : {rows, &one}) {
      columnar::Column* column = batch->mutable_column(fill.column);
      const int64_t at = batch == rows ? row : 0;
      column->Truncate(at);
      column->AppendFrom(*value, 0);
    }
  }
  for (int i : not_null_) {
    if (one.column(i).IsNull(0)) {
      return InvalidArgument(
          "column '{}' is NOT NULL, and neither the message nor the table gives it a value",
          one.schema().field(i).name);
    }
  }
  for (const Check& check : checks_) {
    if (transform::Expression::TrueRows(*check.condition->Evaluate(one)).empty()) {
      return InvalidArgument("the row violates CHECK constraint '{}' ({})", check.name,
                             check.expression);
    }
  }
  return Status::OK();
}

Result<columnar::SchemaPtr> AssignIdentityValues(const delta::ColumnRules& rules,
                                                 const columnar::Schema& table,
                                                 columnar::RecordBatch* rows) {
  columnar::SchemaPtr out;
  if (rules.identity.empty() || rows->num_rows() == 0) {
    return out;
  }
  std::vector<std::unique_ptr<columnar::Column>> columns = rows->ReleaseColumns();
  columnar::SchemaPtr schema = rows->schema_ptr();
  for (const delta::IdentityColumn& id : rules.identity) {
    std::optional<int> i = schema->FieldIndex(id.column);
    if (!i) {
      continue;
    }
    const auto& old = *columns[static_cast<size_t>(*i)]->As<columnar::Int64Column>();
    if (old.null_count() == 0) {
      continue;
    }
    Result<int64_t> first = delta::FirstIdentityValue(id);
    if (!first.ok()) {
      *rows = columnar::RecordBatch(schema, std::move(columns));
      return first.status();
    }
    int64_t next = *first;
    int64_t mark = next;
    bool overflow = false;  // `next` is past BIGINT
    auto fresh = std::make_unique<columnar::Int64Column>(old.type());
    fresh->Reserve(old.length());
    for (int64_t r = 0; r < old.length(); ++r) {
      if (old.IsValid(r)) {
        fresh->Append(old.Value(r));
        continue;
      }
      if (overflow) {
        *rows = columnar::RecordBatch(schema, std::move(columns));
        return InvalidArgument("identity column '{}': the next value overflows BIGINT", id.column);
      }
      fresh->Append(next);
      mark = next;
      overflow = __builtin_add_overflow(next, id.step, &next);
    }
    columns[static_cast<size_t>(*i)] = std::move(fresh);
    out = delta::WithIdentityHighWaterMark(out != nullptr ? *out : table, id.column, mark);
  }
  *rows = columnar::RecordBatch(schema, std::move(columns));
  return out;
}

}  // namespace ferry::pipeline
