#include "ferry/parquet/record_assembly.h"

#include <algorithm>
#include <type_traits>

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::PrimitiveColumn;
using columnar::StructColumn;
using NodeKind = AssemblyNode::Kind;

// Appends values[first..first + n) (or values[indices[0..n)]) as valid rows.
template <typename C>
void AppendDense(int64_t n, const C& values, int64_t first, const uint32_t* indices, C* out) {
  if constexpr (std::is_same_v<C, BinaryColumn>) {
    for (int64_t k = 0; k < n; k++) {
      out->Append(values.Value(indices != nullptr ? static_cast<int64_t>(indices[k]) : first + k));
    }
  } else {
    using T = typename C::ValueType;
    std::vector<T>* dst = out->mutable_values();
    size_t old = dst->size();
    dst->resize(old + static_cast<size_t>(n));
    T* p = dst->data() + old;
    const T* src = values.values().data() + (indices != nullptr ? 0 : first);
    if (indices != nullptr) {
      for (int64_t k = 0; k < n; k++) {
        p[k] = src[indices[k]];
      }
    } else {
      std::copy(src, src + n, p);
    }
    out->AppendValidity(n, true);
  }
}

template <typename C>
int64_t AppendSlotsTyped(std::span<const int16_t> def, int64_t positions, int16_t slot_def,
                         int16_t max_def, const C& values, int64_t first, const uint32_t* indices,
                         C* out) {
  auto value_at = [&](int64_t k) {
    return indices != nullptr ? static_cast<int64_t>(indices[k]) : first + k;
  };
  out->Reserve(out->length() + positions);
  if (def.empty()) {
    AppendDense(positions, values, first, indices, out);
    return positions;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < positions; i++) {
    int16_t d = def[static_cast<size_t>(i)];
    if (d < slot_def) {
      continue;
    }
    if (d != max_def) {
      out->AppendNull();
      continue;
    }
    out->Append(values.Value(value_at(next++)));
  }
  return next;
}

// Appends one validity bit per row of a struct.
void AssembleStructValidity(const AssemblyNode& node, const LeafLevels& l, StructColumn* col) {
  for (int64_t i = 0; i < l.size; i++) {
    if (l.rep_at(i) <= node.rep_level && l.def_at(i) >= node.slot_def) {
      col->AppendValidity(l.def_at(i) >= node.valid_def);
    }
  }
}

// Appends the rows of a list or map: `append(end, valid)` per row.
template <typename C>
Status AssembleOffsets(const AssemblyNode& node, const LeafLevels& l, C* col) {
  const int64_t base = col->offsets().back();
  int64_t elements = 0;
  bool open = false;
  bool valid = false;
  for (int64_t i = 0; i < l.size; i++) {
    int16_t d = l.def_at(i);
    int16_t r = l.rep_at(i);
    bool slot = r <= node.rep_level && d >= node.slot_def;
    if (slot) {
      if (open) {
        col->AppendRowEndingAt(base + elements, valid);
      }
      open = true;
      valid = d >= node.valid_def;
    }
    if (r <= node.rep_level + 1 && d >= node.elements_def) {
      if (!open || !valid) {
        return DataLoss("level position {}: an element (def {}, rep {}) outside a non-null list", i,
                        d, r);
      }
      elements++;
    }
  }
  if (open) {
    col->AppendRowEndingAt(base + elements, valid);
  }
  return Status::OK();
}

Status CheckLength(const Column& child, int64_t expected, std::string_view what) {
  if (child.length() != expected) {
    return DataLoss("the leaves disagree: {} has {} rows, its parent expects {}", what,
                    child.length(), expected);
  }
  return Status::OK();
}

}  // namespace

int64_t AppendLeafSlots(std::span<const int16_t> def, int64_t positions, int16_t slot_def,
                        int16_t max_def, const Column& values, const uint32_t* indices, Column* out,
                        int64_t first) {
  if (values.type()->is_binary_like()) {
    return AppendSlotsTyped(def, positions, slot_def, max_def,
                            static_cast<const BinaryColumn&>(values), first, indices,
                            static_cast<BinaryColumn*>(out));
  }
  return columnar::VisitPrimitive(out->type_id(), [&]<typename C>(C*) {
    return AppendSlotsTyped(def, positions, slot_def, max_def, static_cast<const C&>(values), first,
                            indices, static_cast<C*>(out));
  });
}

Status AssembleNested(const AssemblyNode& node, const std::vector<LeafLevels>& levels,
                      Column* column) {
  const LeafLevels& l = levels[static_cast<size_t>(node.first_leaf)];
  switch (node.kind) {
    case NodeKind::kLeaf:
      return Status::OK();
    case NodeKind::kStruct: {
      auto* col = column->As<StructColumn>();
      AssembleStructValidity(node, l, col);
      for (size_t i = 0; i < node.children.size(); i++) {
        Column* child = col->mutable_child(static_cast<int>(i));
        FERRY_RETURN_IF_ERROR(AssembleNested(node.children[i], levels, child));
        FERRY_RETURN_IF_ERROR(CheckLength(*child, col->length(), col->type()->fields()[i].name));
      }
      return Status::OK();
    }
    case NodeKind::kList: {
      auto* col = column->As<ListColumn>();
      FERRY_RETURN_IF_ERROR(AssembleOffsets(node, l, col));
      FERRY_RETURN_IF_ERROR(AssembleNested(node.children[0], levels, col->mutable_child()));
      return CheckLength(col->child(), col->offsets().back(), "the list element");
    }
    case NodeKind::kMap: {
      auto* col = column->As<MapColumn>();
      FERRY_RETURN_IF_ERROR(AssembleOffsets(node, l, col));
      FERRY_RETURN_IF_ERROR(AssembleNested(node.children[0], levels, col->mutable_keys()));
      FERRY_RETURN_IF_ERROR(AssembleNested(node.children[1], levels, col->mutable_values()));
      FERRY_RETURN_IF_ERROR(CheckLength(col->keys(), col->offsets().back(), "the map key"));
      FERRY_RETURN_IF_ERROR(CheckLength(col->values(), col->offsets().back(), "the map value"));
      if (col->keys().null_count() > 0) {
        return DataLoss("a map key is null");
      }
      return Status::OK();
    }
  }
  return Status::OK();
}

void CollectLeafColumns(const AssemblyNode& node, Column* column, std::vector<Column*>* leaves) {
  switch (node.kind) {
    case NodeKind::kLeaf:
      leaves->push_back(column);
      return;
    case NodeKind::kStruct:
      for (size_t i = 0; i < node.children.size(); i++) {
        CollectLeafColumns(node.children[i],
                           column->As<StructColumn>()->mutable_child(static_cast<int>(i)), leaves);
      }
      return;
    case NodeKind::kList:
      CollectLeafColumns(node.children[0], column->As<ListColumn>()->mutable_child(), leaves);
      return;
    case NodeKind::kMap:
      CollectLeafColumns(node.children[0], column->As<MapColumn>()->mutable_keys(), leaves);
      CollectLeafColumns(node.children[1], column->As<MapColumn>()->mutable_values(), leaves);
      return;
  }
}

}  // namespace ferry::parquet
