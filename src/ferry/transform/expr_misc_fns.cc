// Conditional and hash functions: coalesce, nvl / ifnull, if, nullif, md5, sha1 / sha,
// sha2(x, 224 | 256 | 384 | 512 | 0), and get_json_object. Digests come from OpenSSL's EVP
// interface (libcrypto) and are returned as lower-case hex, as Spark does.
#include <fmt/format.h>
#include <openssl/evp.h>

#include "ferry/transform/expr_internal.h"
#include "ferry/transform/json_path.h"

namespace ferry::transform {

namespace {

using columnar::BinaryColumn;

// --- coalesce, nvl, if, nullif -----------------------------------------------------------------

Status AnalyzeCoalesce(ExprNode* n, AnalyzeContext& ctx) {
  bool is_if = n->name == "if";
  size_t first = is_if ? 1 : 0;
  if (is_if) {
    const DataTypePtr& c = n->args[0]->type;
    if (c && c->id() != TypeId::kBoolean) {
      return ctx.Error(*n->args[0],
                       fmt::format("if needs a BOOLEAN condition, not {}", TypeName(c)));
    }
  }
  DataTypePtr common;
  for (size_t i = first; i < n->args.size(); i++) {
    DataTypePtr w = WiderType(common, n->args[i]->type);
    if (!w && (common || n->args[i]->type)) {
      return ctx.Error(*n->args[i], fmt::format("{} mixes {} and {}", n->name, TypeName(common),
                                                TypeName(n->args[i]->type)));
    }
    common = w;
  }
  n->nullable = n->name != "if";
  for (size_t i = first; i < n->args.size(); i++) {
    if (common && !CanImplicitCast(n->args[i]->type, common)) {
      return ctx.Error(*n->args[i], fmt::format("cannot use {} as {}", TypeName(n->args[i]->type),
                                                TypeName(common)));
    }
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, i, common));
    bool nullable = n->args[i]->nullable;
    n->nullable = is_if ? (n->nullable || nullable) : (n->nullable && nullable);
  }
  if (n->name == "nullif") {
    n->nullable = true;
  }
  n->type = common;
  return Status::OK();
}

Vec EvalCoalesce(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(n.type, ctx.rows);
  columnar::Column* col = out.owned.get();
  for (int64_t i = 0; i < ctx.rows; i++) {
    const Vec* pick = nullptr;
    if (n.name == "if") {
      bool cond = !args[0].IsNull(i) && args[0].Get<uint8_t>(i) != 0;
      pick = &args[cond ? 1 : 2];
    } else if (n.name == "nullif") {
      bool equal = !args[0].IsNull(i) && !args[1].IsNull(i) && n.type &&
                   CompareValues(args[0], i, args[1], i, n.type) == 0;
      pick = equal ? nullptr : &args[0];
    } else {
      for (const Vec& a : args) {
        if (!a.IsNull(i)) {
          pick = &a;
          break;
        }
      }
    }
    if (!pick || pick->IsNull(i) || !n.type) {
      col->AppendNull();
    } else {
      col->AppendFrom(*pick->col, pick->Row(i));
    }
  }
  return out;
}

// --- Digests -----------------------------------------------------------------------------------

Status AnalyzeDigest(ExprNode* n, AnalyzeContext& ctx) {
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::Binary()));
  if (n->args.size() > 1) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 1, DataType::Int32()));
  }
  n->type = DataType::String();
  n->nullable = n->name == "sha2" || n->args[0]->nullable;
  return Status::OK();
}

const EVP_MD* DigestFor(std::string_view name, int64_t bits) {
  if (name == "md5") {
    return EVP_md5();
  }
  if (name == "sha1" || name == "sha") {
    return EVP_sha1();
  }
  switch (bits) {
    case 0:
    case 256:
      return EVP_sha256();
    case 224:
      return EVP_sha224();
    case 384:
      return EVP_sha384();
    case 512:
      return EVP_sha512();
    default:
      return nullptr;  // Spark: NULL for other bit lengths
  }
}

Vec EvalDigest(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  ForEachRow(args, ctx, col, [&](int64_t i) {
    const EVP_MD* md = DigestFor(n.name, args.size() > 1 ? args[1].Get<int32_t>(i) : 0);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    std::string_view data = args[0].Str(i);
    if (!md || EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr) != 1) {
      col->AppendNull();
      return;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string* text = col->mutable_data();
    for (unsigned int k = 0; k < len; k++) {
      text->push_back(kHex[digest[k] >> 4]);
      text->push_back(kHex[digest[k] & 15]);
    }
    col->CommitValue();
  });
  return out;
}

// --- get_json_object ---------------------------------------------------------------------------

Status AnalyzeJsonPath(ExprNode* n, AnalyzeContext& ctx) {
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::String()));
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 1, DataType::String()));
  const ExprNode& path = *n->args[1];
  if (path.is_literal() && !path.literal.is_null) {
    std::optional<JsonPath> p = JsonPath::Parse(path.literal.s);
    if (!p) {
      return ctx.Error(path, fmt::format("invalid JSON path '{}'", path.literal.s));
    }
    n->state = std::make_shared<const JsonPath>(std::move(*p));
  }
  n->type = DataType::String();
  n->nullable = true;
  return Status::OK();
}

Vec EvalJsonPath(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  JsonPathEvaluator evaluator;
  std::optional<JsonPath> row_path;
  ForEachRow(args, ctx, col, [&](int64_t i) {
    const JsonPath* path = static_cast<const JsonPath*>(n.state.get());
    if (!path) {
      row_path = JsonPath::Parse(args[1].Str(i));
      path = row_path ? &*row_path : nullptr;
    }
    std::optional<std::string> r = path ? evaluator.Evaluate(args[0].Str(i), *path) : std::nullopt;
    r ? col->Append(*r) : col->AppendNull();
  });
  return out;
}

}  // namespace

void AddMiscFunctions(std::vector<FunctionDef>* out) {
  out->push_back(FunctionDef{"coalesce", 1, 1000, {}, nullptr, AnalyzeCoalesce, EvalCoalesce});
  for (std::string_view name : {"nvl", "ifnull", "nullif"}) {
    out->push_back(FunctionDef{name, 2, 2, {}, nullptr, AnalyzeCoalesce, EvalCoalesce});
  }
  out->push_back(FunctionDef{"if", 3, 3, {}, nullptr, AnalyzeCoalesce, EvalCoalesce});
  for (std::string_view name : {"md5", "sha1", "sha"}) {
    out->push_back(FunctionDef{name, 1, 1, {}, nullptr, AnalyzeDigest, EvalDigest});
  }
  out->push_back(FunctionDef{"sha2", 2, 2, {}, nullptr, AnalyzeDigest, EvalDigest});
  out->push_back(FunctionDef{"get_json_object", 2, 2, {}, nullptr, AnalyzeJsonPath, EvalJsonPath});
}

}  // namespace ferry::transform
