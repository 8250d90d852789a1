#include "ferry/parquet/shredder.h"

namespace ferry::parquet {
namespace {

using columnar::Column;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::StructColumn;

Status NullInRequired(const PathNode& node, int64_t row) {
  return InvalidArgument("null in non-nullable column '{}' (row {} of that column)", node.name,
                         row);
}

// The columns along the path: for a list or map step the next column is its child, shared by
// every row, so the chain is fixed and only row indices change during the walk.
std::vector<const Column*> ColumnChain(const LeafPath& path, const Column& top) {
  std::vector<const Column*> cols;
  const Column* c = &top;
  for (const PathNode& n : path.nodes) {
    cols.push_back(c);
    switch (n.step) {
      case PathNode::Step::kLeaf:
        break;
      case PathNode::Step::kStructChild:
        c = &c->As<StructColumn>()->child(n.child);
        break;
      case PathNode::Step::kListElement:
        c = &c->As<ListColumn>()->child();
        break;
      case PathNode::Step::kMapKey:
        c = &c->As<MapColumn>()->keys();
        break;
      case PathNode::Step::kMapValue:
        c = &c->As<MapColumn>()->values();
        break;
    }
  }
  return cols;
}

class RepeatedWalker {
 public:
  RepeatedWalker(const LeafPath& path, std::vector<const Column*> cols, ShreddedLeaf* out)
      : nodes_(path.nodes), cols_(std::move(cols)), out_(out) {}

  Status Walk(size_t depth, int64_t idx, int16_t def, int16_t rep) {
    const Column* c = cols_[depth];
    const PathNode& n = nodes_[depth];
    if (c->IsNull(idx)) {
      if (!n.nullable) {
        return NullInRequired(n, idx);
      }
      Emit(def, rep);
      return Status::OK();
    }
    if (n.nullable) {
      ++def;
    }
    switch (n.step) {
      case PathNode::Step::kLeaf:
        Emit(def, rep);
        out_->value_rows.push_back(idx);
        ++out_->num_values;
        return Status::OK();
      case PathNode::Step::kStructChild:
        return Walk(depth + 1, idx, def, rep);
      case PathNode::Step::kListElement:
      case PathNode::Step::kMapKey:
      case PathNode::Step::kMapValue: {
        const std::vector<int64_t>& offsets = n.step == PathNode::Step::kListElement
                                                  ? c->As<ListColumn>()->offsets()
                                                  : c->As<MapColumn>()->offsets();
        int64_t b = offsets[static_cast<size_t>(idx)];
        int64_t e = offsets[static_cast<size_t>(idx) + 1];
        if (b == e) {
          Emit(def, rep);
          return Status::OK();
        }
        auto inner = static_cast<int16_t>(def + 1);
        for (int64_t k = b; k < e; ++k) {
          FERRY_RETURN_IF_ERROR(Walk(depth + 1, k, inner, k == b ? rep : n.repetition_level));
        }
        return Status::OK();
      }
    }
    return Internal("bad path step");
  }

 private:
  void Emit(int16_t def, int16_t rep) {
    out_->def_levels.push_back(def);
    out_->rep_levels.push_back(rep);
    ++out_->num_levels;
  }

  const std::vector<PathNode>& nodes_;
  std::vector<const Column*> cols_;
  ShreddedLeaf* out_;
};

// Leaf rows equal top-level rows: levels come from the validity of each column on the path.
Status ShredDense(const LeafPath& path, const ColumnDescriptor& column,
                  const std::vector<const Column*>& cols, int64_t begin, int64_t end,
                  ShreddedLeaf* out) {
  int64_t n = end - begin;
  out->dense = true;
  out->begin = begin;
  out->end = end;
  out->num_levels = n;
  if (column.max_definition_level == 0) {
    // Every column on the path is required: any null is an error.
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cols[k]->null_count() == 0) {
        continue;
      }
      for (int64_t i = begin; i < end; ++i) {
        if (cols[k]->IsNull(i)) {
          return NullInRequired(path.nodes[k], i);
        }
      }
    }
    out->num_values = n;
    return Status::OK();
  }
  out->def_levels.resize(static_cast<size_t>(n));
  int16_t* def = out->def_levels.data();
  int64_t values = 0;
  if (cols.size() == 1) {
    const uint8_t* valid = cols[0]->validity().data() + begin;
    for (int64_t i = 0; i < n; ++i) {
      def[i] = static_cast<int16_t>(valid[i]);
      values += valid[i];
    }
    out->num_values = values;
    return Status::OK();
  }
  const int16_t max_def = column.max_definition_level;
  for (int64_t i = 0; i < n; ++i) {
    int16_t d = 0;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cols[k]->IsNull(begin + i)) {
        if (!path.nodes[k].nullable) {
          return NullInRequired(path.nodes[k], begin + i);
        }
        break;
      }
      d = static_cast<int16_t>(d + (path.nodes[k].nullable ? 1 : 0));
    }
    def[i] = d;
    values += d == max_def ? 1 : 0;
  }
  out->num_values = values;
  return Status::OK();
}

}  // namespace

Status Shredder::Shred(const LeafPath& path, const ColumnDescriptor& column, const Column& top,
                       int64_t begin, int64_t end, ShreddedLeaf* out) {
  out->def_levels.clear();
  out->rep_levels.clear();
  out->value_rows.clear();
  out->num_levels = 0;
  out->num_values = 0;
  out->num_rows = end - begin;
  std::vector<const Column*> cols = ColumnChain(path, top);
  out->leaf = cols.back();
  if (!path.has_repetition) {
    return ShredDense(path, column, cols, begin, end, out);
  }
  out->dense = false;
  RepeatedWalker walker(path, std::move(cols), out);
  for (int64_t row = begin; row < end; ++row) {
    FERRY_RETURN_IF_ERROR(walker.Walk(0, row, 0, 0));
  }
  return Status::OK();
}

}  // namespace ferry::parquet
