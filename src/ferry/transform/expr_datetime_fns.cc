// Datetime functions: from_unixtime, unix_timestamp / to_unix_timestamp, to_timestamp,
// to_date, date_format, date_trunc, trunc, year, quarter, month, day / dayofmonth, dayofweek,
// dayofyear, hour, minute, second, current_timestamp / now, current_date. Patterns are Spark's
// (datetime_pattern.h); the session time zone is the pipeline's (EvalContext::zone). A string
// that does not parse gives NULL, as in Spark with ANSI mode off.
#include <fmt/format.h>

#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_cast.h"
#include "ferry/transform/datetime_pattern.h"
#include "ferry/transform/expr_internal.h"

namespace ferry::transform {

namespace {

using columnar::BinaryColumn;

constexpr std::string_view kDefaultPattern = "yyyy-MM-dd HH:mm:ss";

bool IsTimestamp(const DataTypePtr& t) {
  return t && t->id() == TypeId::kTimestamp;
}
bool IsDate(const DataTypePtr& t) {
  return t && t->id() == TypeId::kDate;
}

// The pattern of argument `k`: precompiled when a literal (node.state), else compiled for the
// row (the last one is cached). Null for a NULL or invalid pattern.
class PatternSource {
 public:
  PatternSource(const ExprNode& n, const std::vector<Vec>& args, size_t k,
                DateTimePattern::Purpose purpose)
      : node_(n), args_(args), k_(k), purpose_(purpose) {}

  const DateTimePattern* At(int64_t i) {
    if (node_.state) {
      return static_cast<const DateTimePattern*>(node_.state.get());
    }
    if (k_ >= args_.size()) {
      if (!cached_) {
        cached_ = Compile(kDefaultPattern);
      }
      return cached_.get();
    }
    if (args_[k_].IsNull(i)) {
      return nullptr;
    }
    std::string_view text = args_[k_].Str(i);
    if (!cached_ || text != cached_->pattern()) {
      cached_ = Compile(text);
    }
    return cached_.get();
  }

 private:
  std::shared_ptr<const DateTimePattern> Compile(std::string_view text) {
    Result<DateTimePattern> p = DateTimePattern::Compile(text, purpose_);
    return p.ok() ? std::make_shared<const DateTimePattern>(std::move(*p)) : nullptr;
  }

  const ExprNode& node_;
  const std::vector<Vec>& args_;
  size_t k_;
  DateTimePattern::Purpose purpose_;
  std::shared_ptr<const DateTimePattern> cached_;
};

// Casts the pattern argument to STRING and precompiles it when it is a literal (a bad literal
// pattern is an analysis error, as Spark reports it when the query is planned).
Status PreparePattern(ExprNode* n, AnalyzeContext& ctx, size_t k,
                      DateTimePattern::Purpose purpose) {
  std::string_view text = kDefaultPattern;
  if (k < n->args.size()) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, k, DataType::String()));
    const ExprNode& arg = *n->args[k];
    if (!arg.is_literal() || arg.literal.is_null) {
      return Status::OK();
    }
    text = arg.literal.s;
  }
  Result<DateTimePattern> p = DateTimePattern::Compile(text, purpose);
  if (!p.ok()) {
    return ctx.Error(k < n->args.size() ? *n->args[k] : *n, p.status().message());
  }
  n->state = std::make_shared<const DateTimePattern>(std::move(*p));
  return Status::OK();
}

// The time argument of unix_timestamp / to_timestamp / to_date: DATE and TIMESTAMP stay, the
// rest is read as a STRING.
Status PrepareTimeArg(ExprNode* n, AnalyzeContext& ctx) {
  const DataTypePtr& t = n->args[0]->type;
  if (!IsDate(t) && !IsTimestamp(t)) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::String()));
  }
  return Status::OK();
}

// --- from_unixtime, date_format ---------------------------------------------------------------

Status AnalyzeFormat(ExprNode* n, AnalyzeContext& ctx) {
  if (n->name == "from_unixtime") {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::Int64()));
  } else if (!IsTimestamp(n->args[0]->type) || !n->args[0]->type->utc_adjusted()) {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::Timestamp()));
  }
  FERRY_RETURN_IF_ERROR(PreparePattern(n, ctx, 1, DateTimePattern::Purpose::kFormat));
  n->type = DataType::String();
  n->nullable = true;
  return Status::OK();
}

Vec EvalFormat(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::String(), ctx.rows);
  auto* col = out.owned->As<BinaryColumn>();
  PatternSource patterns(n, args, 1, DateTimePattern::Purpose::kFormat);
  bool seconds = n.name == "from_unixtime";
  for (int64_t i = 0; i < ctx.rows; i++) {
    const DateTimePattern* p = args[0].IsNull(i) ? nullptr : patterns.At(i);
    if (!p) {
      col->AppendNull();
      continue;
    }
    int64_t v = args[0].Get<int64_t>(i);
    int64_t micros = 0;
    if (seconds && __builtin_mul_overflow(v, kMicrosPerSecond, &micros)) {
      col->AppendNull();
      continue;
    }
    p->Format(seconds ? micros : v, *ctx.zone, col->mutable_data());
    col->CommitValue();
  }
  return out;
}

// --- unix_timestamp, to_timestamp, to_date -----------------------------------------------------

Status AnalyzeParse(ExprNode* n, AnalyzeContext& ctx) {
  if (n->args.empty()) {  // unix_timestamp(): now
    n->type = DataType::Int64();
    n->nullable = false;
    return Status::OK();
  }
  FERRY_RETURN_IF_ERROR(PrepareTimeArg(n, ctx));
  bool has_format =
      n->args.size() > 1 || n->name == "unix_timestamp" || n->name == "to_unix_timestamp";
  if (has_format) {
    FERRY_RETURN_IF_ERROR(PreparePattern(n, ctx, 1, DateTimePattern::Purpose::kParse));
  }
  n->type = n->name == "to_date"        ? DataType::Date()
            : n->name == "to_timestamp" ? DataType::Timestamp()
                                        : DataType::Int64();
  n->nullable = true;
  return Status::OK();
}

// The instant (micros) a time argument denotes, or nullopt.
std::optional<int64_t> InstantOf(const ExprNode& n, std::vector<Vec>& args, int64_t i,
                                 PatternSource* patterns, const EvalContext& ctx) {
  const DataTypePtr& t = n.args[0]->type;
  if (IsDate(t)) {
    return ctx.zone->LocalToUtc(int64_t{args[0].Get<int32_t>(i)} * kSecondsPerDay) *
           kMicrosPerSecond;
  }
  if (IsTimestamp(t)) {
    int64_t v = args[0].Get<int64_t>(i);
    if (!t->utc_adjusted()) {  // wall clock in the session zone
      return ctx.zone->LocalToUtc(FloorDiv(v, kMicrosPerSecond)) * kMicrosPerSecond +
             FloorMod(v, kMicrosPerSecond);
    }
    return v;
  }
  std::string_view text = args[0].Str(i);
  if (n.args.size() < 2 && n.name != "unix_timestamp" && n.name != "to_unix_timestamp") {
    return ParseTimestampText(text, *ctx.zone);  // no pattern: CAST(s AS TIMESTAMP)
  }
  const DateTimePattern* p = patterns->At(i);
  if (!p) {
    return std::nullopt;
  }
  return p->Parse(text, *ctx.zone);
}

Vec EvalParse(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(n.type, ctx.rows);
  columnar::Column* col = out.owned.get();
  PatternSource patterns(n, args, 1, DateTimePattern::Purpose::kParse);
  for (int64_t i = 0; i < ctx.rows; i++) {
    std::optional<int64_t> micros;
    if (args.empty()) {
      micros = ctx.now_micros;
    } else if (!args[0].IsNull(i)) {
      if (n.name == "to_date" && args.size() == 1 && IsStringLike(n.args[0]->type)) {
        std::optional<int32_t> days = ParseDateText(args[0].Str(i));  // CAST(s AS DATE)
        days ? col->As<columnar::DateColumn>()->Append(*days) : col->AppendNull();
        continue;
      }
      micros = InstantOf(n, args, i, &patterns, ctx);
    }
    if (!micros) {
      col->AppendNull();
    } else if (n.type->id() == TypeId::kInt64) {
      col->As<columnar::Int64Column>()->Append(*micros / kMicrosPerSecond);  // truncates, as Spark
    } else if (n.type->id() == TypeId::kDate) {
      int64_t local = *micros + int64_t{ctx.zone->OffsetAt(FloorDiv(*micros, kMicrosPerSecond))} *
                                    kMicrosPerSecond;
      col->As<columnar::DateColumn>()->Append(static_cast<int32_t>(FloorDiv(local, kMicrosPerDay)));
    } else {
      col->As<columnar::TimestampColumn>()->Append(*micros);
    }
  }
  return out;
}

// --- date_trunc, trunc -------------------------------------------------------------------------

enum class Unit {
  kYear,
  kQuarter,
  kMonth,
  kWeek,
  kDay,
  kHour,
  kMinute,
  kSecond,
  kMilli,
  kMicro,
  kBad
};

Unit ParseUnit(std::string_view s) {
  std::string u;
  for (char c : s) {
    u.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c));
  }
  if (u == "YEAR" || u == "YYYY" || u == "YY") {
    return Unit::kYear;
  }
  if (u == "QUARTER") {
    return Unit::kQuarter;
  }
  if (u == "MONTH" || u == "MM" || u == "MON") {
    return Unit::kMonth;
  }
  static const std::pair<std::string_view, Unit> kOthers[] = {
      {"WEEK", Unit::kWeek},         {"DAY", Unit::kDay},          {"DD", Unit::kDay},
      {"HOUR", Unit::kHour},         {"MINUTE", Unit::kMinute},    {"SECOND", Unit::kSecond},
      {"MILLISECOND", Unit::kMilli}, {"MICROSECOND", Unit::kMicro}};
  for (const auto& [name, unit] : kOthers) {
    if (u == name) {
      return unit;
    }
  }
  return Unit::kBad;
}

int64_t TruncDays(int64_t days, Unit unit) {
  CivilDate d = CivilFromDays(days);
  switch (unit) {
    case Unit::kYear:
      return DaysFromCivil(d.year, 1, 1);
    case Unit::kQuarter:
      return DaysFromCivil(d.year, (d.month - 1) / 3 * 3 + 1, 1);
    case Unit::kMonth:
      return DaysFromCivil(d.year, d.month, 1);
    case Unit::kWeek:
      return days - DayOfWeek(days);  // back to Monday
    default:
      return days;
  }
}

Status AnalyzeTrunc(ExprNode* n, AnalyzeContext& ctx) {
  bool date_trunc = n->name == "date_trunc";
  size_t unit_arg = date_trunc ? 0 : 1;
  FERRY_RETURN_IF_ERROR(ctx.CastArg(n, unit_arg, DataType::String()));
  FERRY_RETURN_IF_ERROR(
      ctx.CastArg(n, 1 - unit_arg, date_trunc ? DataType::Timestamp() : DataType::Date()));
  n->type = date_trunc ? DataType::Timestamp() : DataType::Date();
  n->nullable = true;
  return Status::OK();
}

Vec EvalTrunc(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(n.type, ctx.rows);
  bool date_trunc = n.name == "date_trunc";
  const Vec& unit_arg = args[date_trunc ? 0 : 1];
  const Vec& value = args[date_trunc ? 1 : 0];
  ForEachRow(args, ctx, out.owned.get(), [&](int64_t i) {
    Unit unit = ParseUnit(unit_arg.Str(i));
    if (unit == Unit::kBad || (!date_trunc && unit > Unit::kWeek)) {
      out.owned->AppendNull();
      return;
    }
    if (!date_trunc) {
      out.owned->As<columnar::DateColumn>()->Append(
          static_cast<int32_t>(TruncDays(value.Get<int32_t>(i), unit)));
      return;
    }
    int64_t t = value.Get<int64_t>(i);
    int64_t offset = int64_t{ctx.zone->OffsetAt(FloorDiv(t, kMicrosPerSecond))} * kMicrosPerSecond;
    int64_t local = t + offset;
    static constexpr int64_t kSizes[] = {0,
                                         0,
                                         0,
                                         0,
                                         kMicrosPerDay,
                                         3600 * kMicrosPerSecond,
                                         60 * kMicrosPerSecond,
                                         kMicrosPerSecond,
                                         kMicrosPerMilli,
                                         1};
    if (unit <= Unit::kWeek) {
      local = TruncDays(FloorDiv(local, kMicrosPerDay), unit) * kMicrosPerDay;
    } else {
      int64_t size = kSizes[static_cast<int>(unit)];
      local = FloorDiv(local, size) * size;
    }
    int64_t r = ctx.zone->LocalToUtc(FloorDiv(local, kMicrosPerSecond)) * kMicrosPerSecond +
                FloorMod(local, kMicrosPerSecond);
    out.owned->As<columnar::TimestampColumn>()->Append(r);
  });
  return out;
}

// --- Fields: year ... second -------------------------------------------------------------------

bool IsTimeField(std::string_view name) {
  return name == "hour" || name == "minute" || name == "second";
}

Status AnalyzeField(ExprNode* n, AnalyzeContext& ctx) {
  const DataTypePtr& t = n->args[0]->type;
  if (IsTimeField(n->name)) {
    if (!IsTimestamp(t)) {
      FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::Timestamp()));
    }
  } else {
    FERRY_RETURN_IF_ERROR(ctx.CastArg(n, 0, DataType::Date()));
  }
  n->type = DataType::Int32();
  n->nullable = n->args[0]->nullable;
  return Status::OK();
}

Vec EvalField(const ExprNode& n, std::vector<Vec>& args, const EvalContext& ctx) {
  Vec out = NewVec(DataType::Int32(), ctx.rows);
  auto* col = out.owned->As<columnar::Int32Column>();
  std::string_view f = n.name;
  bool utc = n.args[0]->type->id() == TypeId::kTimestamp && n.args[0]->type->utc_adjusted();
  ForEachRow(args, ctx, col, [&](int64_t i) {
    if (IsTimeField(f)) {
      int64_t t = args[0].Get<int64_t>(i);
      int64_t s = FloorDiv(t, kMicrosPerSecond);
      int64_t sod = FloorMod(s + (utc ? ctx.zone->OffsetAt(s) : 0), kSecondsPerDay);
      col->Append(static_cast<int32_t>(f == "hour"     ? sod / 3600
                                       : f == "minute" ? sod / 60 % 60
                                                       : sod % 60));
      return;
    }
    int64_t days = args[0].Get<int32_t>(i);
    CivilDate d = CivilFromDays(days);
    int v = f == "year"        ? static_cast<int>(d.year)
            : f == "quarter"   ? (d.month - 1) / 3 + 1
            : f == "month"     ? d.month
            : f == "dayofweek" ? (DayOfWeek(days) + 1) % 7 + 1  // 1 = Sunday
            : f == "dayofyear" ? DayOfYear(d)
                               : d.day;
    col->Append(v);
  });
  return out;
}

// --- current_timestamp, current_date -----------------------------------------------------------

Vec EvalNow(const ExprNode& n, std::vector<Vec>&, const EvalContext& ctx) {
  Vec out = NewVec(n.type, 1);
  if (n.type->id() == TypeId::kDate) {
    int64_t s = FloorDiv(ctx.now_micros, kMicrosPerSecond);
    out.owned->As<columnar::DateColumn>()->Append(
        static_cast<int32_t>(FloorDiv(s + ctx.zone->OffsetAt(s), kSecondsPerDay)));
  } else {
    out.owned->As<columnar::TimestampColumn>()->Append(ctx.now_micros);
  }
  out.constant = true;
  return out;
}

}  // namespace

void AddDatetimeFunctions(std::vector<FunctionDef>* out) {
  out->push_back(FunctionDef{"from_unixtime", 1, 2, {}, nullptr, AnalyzeFormat, EvalFormat});
  out->push_back(FunctionDef{"date_format", 2, 2, {}, nullptr, AnalyzeFormat, EvalFormat});
  out->push_back(FunctionDef{"unix_timestamp", 0, 2, {}, nullptr, AnalyzeParse, EvalParse});
  out->push_back(FunctionDef{"to_unix_timestamp", 1, 2, {}, nullptr, AnalyzeParse, EvalParse});
  out->push_back(FunctionDef{"to_timestamp", 1, 2, {}, nullptr, AnalyzeParse, EvalParse});
  out->push_back(FunctionDef{"to_date", 1, 2, {}, nullptr, AnalyzeParse, EvalParse});
  out->push_back(FunctionDef{"date_trunc", 2, 2, {}, nullptr, AnalyzeTrunc, EvalTrunc});
  out->push_back(FunctionDef{"trunc", 2, 2, {}, nullptr, AnalyzeTrunc, EvalTrunc});
  for (std::string_view f : {"year", "quarter", "month", "day", "dayofmonth", "dayofweek",
                             "dayofyear", "hour", "minute", "second"}) {
    out->push_back(FunctionDef{f, 1, 1, {}, nullptr, AnalyzeField, EvalField});
  }
  for (std::string_view f : {"current_timestamp", "now"}) {
    FunctionDef def{f, 0, 0, {}, DataType::Timestamp(), nullptr, EvalNow};
    def.foldable = false;
    out->push_back(def);
  }
  FunctionDef today{"current_date", 0, 0, {}, DataType::Date(), nullptr, EvalNow};
  today.foldable = false;
  out->push_back(today);
}

}  // namespace ferry::transform
