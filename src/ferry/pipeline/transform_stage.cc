#include "ferry/pipeline/transform_stage.h"

#include <numeric>
#include <set>

namespace ferry::pipeline {

Result<std::unique_ptr<TransformStage>> TransformStage::Create(columnar::SchemaPtr input,
                                                               const TransformSpec& spec) {
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
    stage->derived_.push_back(std::move(expr));
  }
  stage->table_ = std::make_shared<const columnar::Schema>(std::move(fields));
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

std::vector<std::string> TransformStage::derived_names() const {
  std::vector<std::string> names;
  for (int i = input_->num_fields(); i < table_->num_fields(); ++i) {
    names.push_back(table_->field(i).name);
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
    }
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

}  // namespace ferry::pipeline
