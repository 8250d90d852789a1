#include "ferry/pipeline/transform_stage.h"

#include <numeric>
#include <optional>
#include <set>

#include "ferry/columnar/column_conform.h"
#include "ferry/pipeline/table_rules.h"

namespace ferry::pipeline {

Result<std::unique_ptr<TransformStage>> TransformStage::Create(columnar::SchemaPtr input,
                                                               const TransformSpec& spec,
                                                               const columnar::Schema* table) {
  auto stage = std::unique_ptr<TransformStage>(new TransformStage());
  stage->input_ = input;
  std::vector<columnar::Field> fields = input->fields();
  for (const DerivedColumnSpec& column : spec.columns) {
    if (column.name.empty()) {
      return InvalidArgument("{}: a derived column needs a name", column.origin);
    }
    for (const columnar::Field& f : fields) {
      if (f.name == column.name) {
        return InvalidArgument("{}: column '{}' exists already; a derived column needs a new name",
                               column.origin, column.name);
      }
    }
    FERRY_ASSIGN_OR_RETURN(auto expr, transform::Expression::Compile(
                                          column.expr, *input,
                                          {.time_zone = spec.time_zone, .origin = column.origin}));
    fields.push_back({.name = column.name, .type = expr->type(), .nullable = true});
    stage->derived_fields_.push_back(fields.back());
    stage->derived_.push_back(std::move(expr));
  }
  stage->table_ = std::make_shared<const columnar::Schema>(std::move(fields));
  if (table != nullptr) {
    FERRY_RETURN_IF_ERROR(stage->FollowTable(*table));
  }
  // `where` binds to the table's column order (compiled after FollowTable).
  if (!spec.where.empty()) {
    FERRY_ASSIGN_OR_RETURN(
        stage->where_,
        transform::Expression::Compile(spec.where, *stage->table_,
                                       {.time_zone = spec.time_zone, .origin = spec.where_origin}));
    if (stage->where_->type()->id() != columnar::TypeId::kBoolean) {
      return InvalidArgument("{}: `where` must be a condition (BOOLEAN), not {}", spec.where_origin,
                             stage->where_->type()->ToString());
    }
  }
  return stage;
}

Status TransformStage::FollowTable(const columnar::Schema& table) {
  const columnar::Schema& natural = *table_;
  if (table.num_fields() != natural.num_fields()) {
    return InvalidArgument(
        "the table's columns ({}) are not the input columns and the derived ones ({})",
        table.ToString(), natural.ToString());
  }
  std::vector<int> order;
  for (const columnar::Field& t : table.fields()) {
    std::optional<int> i = natural.FieldIndex(t.name);
    if (!i) {
      return InvalidArgument("the table's column '{}' is neither an input nor a derived column",
                             t.name);
    }
    const columnar::Field& ours = natural.field(*i);
    bool derived = *i >= input_->num_fields();
    if (!ours.type->Equals(*t.type) && !(derived && columnar::CanConform(*ours.type, *t.type))) {
      return InvalidArgument("column '{}' is {} in the table but {} in the pipeline", t.name,
                             t.type->ToString(), ours.type->ToString());
    }
    order.push_back(*i);
  }
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) {
    identity =
        identity && order[i] == static_cast<int>(i) &&
        natural.field(static_cast<int>(i)).type->Equals(*table.field(static_cast<int>(i)).type);
  }
  if (!identity) {
    order_ = std::move(order);
  }
  table_ = std::make_shared<const columnar::Schema>(table.fields());
  return Status::OK();
}

std::vector<std::string> TransformStage::derived_names() const {
  std::vector<std::string> names;
  for (const columnar::Field& f : derived_fields_) {
    names.push_back(f.name);
  }
  return names;
}

columnar::RecordBatch TransformStage::Apply(const columnar::RecordBatch& input,
                                            int64_t* filtered) const {
  *filtered = 0;
  std::vector<int64_t> all(static_cast<size_t>(input.num_rows()));
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::unique_ptr<columnar::Column>> columns = input.Take(all).ReleaseColumns();
  for (const auto& expr : derived_) {
    columns.push_back(expr->Evaluate(input));
  }
  if (!order_.empty()) {
    std::vector<std::unique_ptr<columnar::Column>> ordered;
    for (size_t i = 0; i < order_.size(); ++i) {
      std::unique_ptr<columnar::Column> column = std::move(columns[static_cast<size_t>(order_[i])]);
      const columnar::DataTypePtr& type = table_->field(static_cast<int>(i)).type;
      if (!column->type()->Equals(*type)) {
        // A derived column whose table type is wider than its expression's (FollowTable checked).
        column = *columnar::ConformColumn(std::move(column), type);
      }
      ordered.push_back(std::move(column));
    }
    columns = std::move(ordered);
  }
  columnar::RecordBatch out(table_, std::move(columns));
  if (where_ == nullptr) {
    return out;
  }
  std::vector<int64_t> keep = transform::Expression::TrueRows(*where_->Evaluate(out));
  *filtered = out.num_rows() - static_cast<int64_t>(keep.size());
  if (*filtered == 0) {
    return out;
  }
  return out.Take(keep);
}

columnar::SchemaPtr InputSchema(const columnar::Schema& table,
                                const std::vector<DerivedColumnSpec>& derived) {
  std::set<std::string> names;
  for (const DerivedColumnSpec& d : derived) {
    names.insert(d.name);
  }
  std::vector<columnar::Field> fields;
  for (const columnar::Field& f : table.fields()) {
    if (names.count(f.name) == 0) {
      fields.push_back(f);
      if (FilledByTable(f)) {
        // The table fills it (table_rules.h): a message may omit it. The identity high-water
        // mark moves with every commit that assigns values and is no business of a decoder.
        fields.back().nullable = true;
        std::erase_if(fields.back().metadata, [](const auto& entry) {
          return entry.first == delta::kIdentityHighWaterMarkKey;
        });
      }
    }
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

}  // namespace ferry::pipeline
