#include "ferry/config/config.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "ferry/base/file.h"
#include "ferry/config/config_internal.h"

namespace ferry::config {

using internal::ParseContext;
using internal::ReadJetStream;
using internal::ReadKafka;
using internal::Set;
using internal::TomlTable;

std::string SourceLocation::ToString() const {
  return fmt::format("{}:{}:{}: {}", file, line, column, key);
}

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
}

Result<std::string> Interpolate(std::string_view text, const EnvLookup& env) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      out += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      out += text[i++];
      continue;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument("unterminated ${{ in \"{}\" (write $${{ for a literal ${{)", text);
    }
    std::string_view inner = text.substr(i + 2, close - i - 2);
    std::optional<std::string_view> fallback;
    size_t dash = inner.find(":-");
    if (dash != std::string_view::npos) {
      fallback = inner.substr(dash + 2);
      inner = inner.substr(0, dash);
    }
    if (inner.empty() || !std::all_of(inner.begin(), inner.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      return InvalidArgument("bad environment variable name '${{{}}}'", inner);
    }
    std::optional<std::string> value = env(inner);
    if (value) {
      out += *value;
    } else if (fallback) {
      out += *fallback;
    } else {
      return InvalidArgument(
          "environment variable {} is not set (use ${{{}:-default}} for a "
          "default)",
          inner, inner);
    }
    i = close + 1;
  }
  return out;
}

namespace {

// Splits "64MB" into a number and a lowercased unit, skipping blanks between them.
bool SplitNumberUnit(std::string_view text, double* number, std::string* unit) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    end++;
  }
  if (end == 0) {
    return false;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, *number);
  if (ec != std::errc() || ptr != text.data() + end) {
    return false;
  }
  std::string_view rest = text.substr(end);
  while (!rest.empty() && rest.front() == ' ') {
    rest.remove_prefix(1);
  }
  unit->clear();
  for (char c : rest) {
    unit->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return true;
}

}  // namespace

Result<int64_t> ParseSize(std::string_view text) {
  double number = 0;
  std::string unit;
  if (!SplitNumberUnit(text, &number, &unit)) {
    return InvalidArgument("\"{}\" is not a size (use e.g. 64MB, 512KiB, 1GB)", text);
  }
  static const std::pair<const char*, double> kUnits[] = {{"", 1},
                                                          {"b", 1},
                                                          {"k", 1e3},
                                                          {"kb", 1e3},
                                                          {"kib", 1024.0},
                                                          {"m", 1e6},
                                                          {"mb", 1e6},
                                                          {"mib", 1048576.0},
                                                          {"g", 1e9},
                                                          {"gb", 1e9},
                                                          {"gib", 1073741824.0},
                                                          {"t", 1e12},
                                                          {"tb", 1e12},
                                                          {"tib", 1099511627776.0}};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      double bytes = number * factor;
      if (bytes > 9.0e18) {
        return InvalidArgument("\"{}\" is too large", text);
      }
      return static_cast<int64_t>(std::llround(bytes));
    }
  }
  return InvalidArgument(
      "\"{}\" is not a size: unknown unit '{}' (use B, KB, MB, GB, KiB, MiB, GiB)", text, unit);
}

Result<Duration> ParseDuration(std::string_view text) {
  std::string_view rest = text;
  double total_ms = 0;
  bool any = false;
  while (!rest.empty()) {
    size_t end = 0;
    while (end < rest.size() &&
           (std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '.')) {
      end++;
    }
    size_t unit_end = end;
    while (unit_end < rest.size() && std::isalpha(static_cast<unsigned char>(rest[unit_end]))) {
      unit_end++;
    }
    double number = 0;
    std::string unit(rest.substr(end, unit_end - end));
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + end, number);
    if (end == 0 || ec != std::errc() || ptr != rest.data() + end) {
      return InvalidArgument("\"{}\" is not a duration (use e.g. 500ms, 1s, 5m, 24h, 7d)", text);
    }
    double factor;
    if (unit.empty() || unit == "ms") {
      factor = 1;
    } else if (unit == "us") {
      factor = 0.001;
    } else if (unit == "s") {
      factor = 1000;
    } else if (unit == "m" || unit == "min") {
      factor = 60000;
    } else if (unit == "h") {
      factor = 3600000;
    } else if (unit == "d") {
      factor = 86400000;
    } else {
      return InvalidArgument("\"{}\" is not a duration: unknown unit '{}' (ms, s, m, h, d)", text,
                             unit);
    }
    total_ms += number * factor;
    any = true;
    rest = rest.substr(unit_end);
  }
  if (!any) {
    return InvalidArgument("empty duration");
  }
  return Duration(static_cast<int64_t>(std::llround(total_ms)));
}

namespace {

Status ReadDecode(TomlTable& t, DecodeConfig* d) {
  FERRY_ASSIGN_OR_RETURN(auto format, t.String("format"));
  if (format) {
    if (*format == "json") {
      d->format = DecodeConfig::Format::kJson;
    } else if (*format == "raw") {
      d->format = DecodeConfig::Format::kRaw;
    } else {
      return t.Error("format", fmt::format("unknown format \"{}\" (json, raw)", *format));
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto column, t.String("column"));
  if (column) {
    if (d->format != DecodeConfig::Format::kRaw) {
      return t.Error("column", "'column' applies to format = \"raw\"");
    }
    d->raw_column = *column;
  }
  FERRY_ASSIGN_OR_RETURN(auto unknown, t.String("unknown_fields_column"));
  Set(unknown, &d->unknown_fields_column);
  FERRY_ASSIGN_OR_RETURN(auto unit, t.String("timestamp_epoch_unit"));
  if (unit) {
    if (*unit != "seconds" && *unit != "millis" && *unit != "micros") {
      return t.Error("timestamp_epoch_unit", "expected seconds, millis or micros");
    }
    d->timestamp_epoch_unit = *unit;
  }
  FERRY_ASSIGN_OR_RETURN(auto ts_formats, t.StringList("timestamp_formats"));
  FERRY_ASSIGN_OR_RETURN(auto date_formats, t.StringList("date_formats"));
  Set(ts_formats, &d->timestamp_formats);
  Set(date_formats, &d->date_formats);
  return t.Finish();
}

Status ReadBatch(TomlTable& t, BatchConfig* b) {
  FERRY_ASSIGN_OR_RETURN(auto rows, t.Int("max_rows"));
  FERRY_ASSIGN_OR_RETURN(auto bytes, t.Size("max_bytes"));
  FERRY_ASSIGN_OR_RETURN(auto latency, t.DurationValue("max_latency"));
  FERRY_ASSIGN_OR_RETURN(auto in_flight, t.Int("max_in_flight"));
  if (rows && *rows < 1) {
    return t.Error("max_rows", "must be at least 1");
  }
  if (bytes && *bytes < 1024) {
    return t.Error("max_bytes", "must be at least 1KiB");
  }
  if (latency && latency->count() < 1) {
    return t.Error("max_latency", "must be at least 1ms");
  }
  if (in_flight && (*in_flight < 0 || *in_flight > 4)) {
    return t.Error("max_in_flight", "must be between 0 and 4");
  }
  Set(rows, &b->max_rows);
  Set(bytes, &b->max_bytes);
  Set(latency, &b->max_latency);
  Set(in_flight, &b->max_in_flight);
  return t.Finish();
}

Status ReadMaintenance(TomlTable& t, MaintenanceConfig* m) {
  FERRY_ASSIGN_OR_RETURN(auto optimize, t.DurationValue("optimize_every"));
  FERRY_ASSIGN_OR_RETURN(auto vacuum, t.DurationValue("vacuum_every"));
  FERRY_ASSIGN_OR_RETURN(auto retain, t.DurationValue("vacuum_retain"));
  if (optimize && optimize->count() < 1000) {
    return t.Error("optimize_every", "must be at least 1s");
  }
  if (vacuum && vacuum->count() < 1000) {
    return t.Error("vacuum_every", "must be at least 1s");
  }
  if (retain && retain->count() < int64_t{168} * 3600 * 1000) {
    return t.Error(
        "vacuum_retain",
        "must be at least 168h (older versions' readers and time travel need the files)");
  }
  Set(optimize, &m->optimize_every);
  Set(vacuum, &m->vacuum_every);
  Set(retain, &m->vacuum_retain);
  return t.Finish();
}

Status ReadWriter(TomlTable& t, WriterConfig* w) {
  FERRY_ASSIGN_OR_RETURN(auto codec, t.String("codec"));
  if (codec) {
    static const std::set<std::string> kCodecs = {"uncompressed", "snappy", "zstd", "gzip",
                                                  "lz4_raw"};
    if (kCodecs.count(*codec) == 0) {
      return t.Error("codec", fmt::format("unknown codec \"{}\" (uncompressed, snappy, zstd, gzip, "
                                          "lz4_raw)",
                                          *codec));
    }
    w->codec = *codec;
  }
  FERRY_ASSIGN_OR_RETURN(auto level, t.Int("compression_level"));
  if (level) {
    if (*level < -7 || *level > 22) {
      return t.Error("compression_level", "must be between -7 and 22");
    }
    w->compression_level = static_cast<int>(*level);
  }
  FERRY_ASSIGN_OR_RETURN(auto target, t.Size("target_file_size"));
  if (target) {
    if (*target < (1 << 20)) {
      return t.Error("target_file_size", "must be at least 1MiB");
    }
    w->target_file_size = *target;
  }
  return t.Finish();
}

Status ReadMetadataColumns(TomlTable& t, bool kafka, std::map<std::string, std::string>* out) {
  static const std::set<std::string> kKafka = {"key",    "topic",     "partition",
                                               "offset", "timestamp", "headers"};
  static const std::set<std::string> kJetStream = {"subject", "sequence", "timestamp",
                                                   "headers", "msg_id",   "stream"};
  FERRY_ASSIGN_OR_RETURN(auto map, t.StringMap("metadata_columns"));
  if (!map) {
    return Status::OK();
  }
  const auto& allowed = kafka ? kKafka : kJetStream;
  std::set<std::string> names;
  for (const auto& [kind, column] : *map) {
    if (allowed.count(kind) == 0) {
      std::string list;
      for (const std::string& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
      }
      return t.Error("metadata_columns",
                     fmt::format("unknown metadata '{}' for a {} source (one of: {})", kind,
                                 kafka ? "Kafka" : "JetStream", list));
    }
    if (column.empty() || !names.insert(column).second) {
      return t.Error(
          "metadata_columns",
          fmt::format("column name \"{}\" for '{}' is empty or used twice", column, kind));
    }
    (*out)[kind] = column;
  }
  return Status::OK();
}

Status ReadPipeline(TomlTable& t, PipelineConfig* p) {
  p->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(auto id, t.String("id"));
  if (!id || id->empty()) {
    return t.Error("", "missing key 'id' (a name for the pipeline, e.g. id = \"events\")");
  }
  for (char c : *id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return t.Error("id", fmt::format("\"{}\": use letters, digits, '-', '_' and '.' only (the id "
                                       "is part of every position's appId)",
                                       *id));
    }
  }
  p->id = *id;
  FERRY_ASSIGN_OR_RETURN(auto table, t.String("table"));
  if (!table || table->empty()) {
    return t.Error("", "missing key 'table' (the Delta table's path)");
  }
  p->table = *table;
  FERRY_ASSIGN_OR_RETURN(auto schema, t.String("schema"));
  if (schema) {
    p->schema = *schema;
    p->schema_location = t.Location("schema");
  }
  FERRY_ASSIGN_OR_RETURN(auto partition_by, t.StringList("partition_by"));
  Set(partition_by, &p->partition_by);
  FERRY_ASSIGN_OR_RETURN(auto create, t.Bool("create_table"));
  Set(create, &p->create_table);
  FERRY_ASSIGN_OR_RETURN(auto props, t.StringMap("table_properties"));
  if (props) {
    for (const auto& [k, v] : *props) {
      if (k == "delta.setTransactionRetentionDuration") {
        return t.Error("table_properties",
                       "delta.setTransactionRetentionDuration would expire the positions that "
                       "make ingestion exactly-once; ferry refuses it");
      }
      p->table_properties[k] = v;
    }
  }

  FERRY_ASSIGN_OR_RETURN(auto kafka, t.Table("kafka"));
  FERRY_ASSIGN_OR_RETURN(auto jetstream, t.Table("jetstream"));
  if (kafka.has_value() == jetstream.has_value()) {
    return t.Error("",
                   "a pipeline needs exactly one source: [pipeline.kafka] or "
                   "[pipeline.jetstream]");
  }
  if (kafka) {
    p->kafka.emplace();
    FERRY_RETURN_IF_ERROR(ReadKafka(*kafka, p->id, &*p->kafka));
  } else {
    p->jetstream.emplace();
    FERRY_RETURN_IF_ERROR(ReadJetStream(*jetstream, &*p->jetstream));
  }
  FERRY_RETURN_IF_ERROR(ReadMetadataColumns(t, kafka.has_value(), &p->metadata_columns));

  FERRY_ASSIGN_OR_RETURN(auto decode, t.Table("decode"));
  if (decode) {
    FERRY_RETURN_IF_ERROR(ReadDecode(*decode, &p->decode));
  }
  FERRY_ASSIGN_OR_RETURN(auto batch, t.Table("batch"));
  if (batch) {
    FERRY_RETURN_IF_ERROR(ReadBatch(*batch, &p->batch));
  }
  FERRY_ASSIGN_OR_RETURN(auto writer, t.Table("writer"));
  if (writer) {
    FERRY_RETURN_IF_ERROR(ReadWriter(*writer, &p->writer));
  }
  FERRY_ASSIGN_OR_RETURN(auto maintenance, t.Table("maintenance"));
  if (maintenance) {
    FERRY_RETURN_IF_ERROR(ReadMaintenance(*maintenance, &p->maintenance));
  }
  FERRY_ASSIGN_OR_RETURN(auto columns, t.TableArray("columns"));
  for (TomlTable& c : columns) {
    DerivedColumn col;
    col.location = c.Location("expr");
    FERRY_ASSIGN_OR_RETURN(auto name, c.String("name"));
    FERRY_ASSIGN_OR_RETURN(auto expr, c.String("expr"));
    if (!name || name->empty() || !expr || expr->empty()) {
      return c.Error("", "a derived column needs name and expr");
    }
    col.name = *name;
    col.expr = *expr;
    FERRY_RETURN_IF_ERROR(c.Finish());
    p->columns.push_back(std::move(col));
  }
  FERRY_ASSIGN_OR_RETURN(auto where, t.String("where"));
  Set(where, &p->where);
  FERRY_ASSIGN_OR_RETURN(auto on_bad, t.String("on_bad_record"));
  if (on_bad) {
    if (*on_bad != "fail" && *on_bad != "dead_letter" && *on_bad != "skip") {
      return t.Error("on_bad_record", "expected fail, dead_letter or skip");
    }
    p->on_bad_record = *on_bad;
  }
  FERRY_ASSIGN_OR_RETURN(auto dlq, t.String("dead_letter_table"));
  Set(dlq, &p->dead_letter_table);
  if (p->on_bad_record == "dead_letter" && p->dead_letter_table.empty()) {
    // The default: a sibling of the table, "<table>_dead_letter".
    std::string_view root = p->table;
    while (root.size() > 1 && root.back() == '/') {
      root.remove_suffix(1);
    }
    p->dead_letter_table = std::string(root) + "_dead_letter";
  }
  FERRY_ASSIGN_OR_RETURN(auto dedup, t.Table("dedup"));
  if (dedup) {
    DedupConfig d;
    d.location = dedup->Location("");
    FERRY_ASSIGN_OR_RETURN(auto key, dedup->String("key"));
    if (!key || key->empty()) {
      return dedup->Error("", "dedup needs key = \"<column or expression>\"");
    }
    d.key = *key;
    FERRY_ASSIGN_OR_RETURN(auto window, dedup->DurationValue("window"));
    FERRY_ASSIGN_OR_RETURN(auto max_keys, dedup->Int("max_keys"));
    Set(window, &d.window);
    Set(max_keys, &d.max_keys);
    FERRY_RETURN_IF_ERROR(dedup->Finish());
    p->dedup = std::move(d);
  }
  FERRY_ASSIGN_OR_RETURN(auto on_gap, t.String("on_gap"));
  if (on_gap) {
    if (*on_gap != "fail" && *on_gap != "continue") {
      return t.Error("on_gap", "expected fail or continue");
    }
    p->on_gap = *on_gap;
  }
  FERRY_ASSIGN_OR_RETURN(auto tz, t.String("time_zone"));
  Set(tz, &p->time_zone);
  FERRY_ASSIGN_OR_RETURN(auto drain, t.DurationValue("drain_timeout"));
  Set(drain, &p->drain_timeout);
  if (p->create_table && p->schema.empty()) {
    FERRY_ASSIGN_OR_RETURN(auto explicit_create, t.Bool("create_table"));
    if (explicit_create.value_or(false)) {
      return t.Error("create_table", "create_table = true needs a schema");
    }
    p->create_table = false;  // no schema: the table must exist
  }
  return t.Finish();
}

}  // namespace

Result<Config> ParseConfig(std::string_view text, const std::string& path, const EnvLookup& env) {
  Config config;
  config.path = path;
  toml::table parsed;
  try {
    parsed = toml::parse(text, path);
  } catch (const toml::parse_error& err) {
    return InvalidArgument("{}:{}:{}: {}", path, err.source().begin.line, err.source().begin.column,
                           err.description());
  }
  ParseContext ctx{path, &env, &config.secrets};
  TomlTable root(parsed, "", &ctx);

  FERRY_ASSIGN_OR_RETURN(auto log, root.Table("log"));
  if (log) {
    FERRY_ASSIGN_OR_RETURN(auto format, log->String("format"));
    FERRY_ASSIGN_OR_RETURN(auto level, log->String("level"));
    if (format && *format != "text" && *format != "json") {
      return log->Error("format", "expected \"text\" or \"json\"");
    }
    static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error", "off"};
    if (level && kLevels.count(*level) == 0) {
      return log->Error("level", "expected trace, debug, info, warn, error or off");
    }
    Set(format, &config.log.format);
    Set(level, &config.log.level);
    FERRY_RETURN_IF_ERROR(log->Finish());
  }
  FERRY_ASSIGN_OR_RETURN(auto metrics, root.Table("metrics"));
  if (metrics) {
    FERRY_ASSIGN_OR_RETURN(auto listen, metrics->String("listen"));
    if (listen && listen->rfind(':') == std::string::npos) {
      return metrics->Error("listen", "expected \"host:port\", e.g. \"127.0.0.1:9464\"");
    }
    Set(listen, &config.metrics.listen);
    FERRY_RETURN_IF_ERROR(metrics->Finish());
  }
  FERRY_ASSIGN_OR_RETURN(auto pipelines, root.TableArray("pipeline"));
  if (pipelines.empty()) {
    return InvalidArgument("{}: no [[pipeline]] defined", path);
  }
  std::set<std::string> ids, tables;
  for (TomlTable& t : pipelines) {
    PipelineConfig p;
    FERRY_RETURN_IF_ERROR(ReadPipeline(t, &p));
    if (!ids.insert(p.id).second) {
      return t.Error("id", fmt::format("pipeline id \"{}\" is used twice", p.id));
    }
    if (!tables.insert(p.table).second) {
      return t.Error("table", fmt::format("table \"{}\" is fed by two pipelines; give each "
                                          "pipeline its own table",
                                          p.table));
    }
    config.pipelines.push_back(std::move(p));
  }
  FERRY_RETURN_IF_ERROR(root.Finish());
  return config;
}

Result<Config> LoadConfig(const std::string& path, const EnvLookup& env) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return text.status().WithContext("reading config");
  }
  return ParseConfig(*text, path, env);
}

}  // namespace ferry::config
