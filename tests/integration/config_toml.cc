#include "config_toml.h"

#include <fmt/format.h>

#include <fstream>

namespace ferry::e2e {

namespace {

// `key = "value"\n`, or nothing for an empty value.
std::string OptionalString(const char* key, const std::string& value) {
  return value.empty() ? "" : fmt::format("{} = \"{}\"\n", key, value);
}

// The text verbatim, ending in a newline unless empty.
std::string Lines(const std::string& text) {
  return text.empty() || text.back() == '\n' ? text : text + "\n";
}

}  // namespace

std::string TomlStrings(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) {
    out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", v);
  }
  return "[" + out + "]";
}

std::string KafkaSection(const KafkaToml& kafka) {
  std::string out = fmt::format("[pipeline.kafka]\nbrokers = \"{}\"\ntopics = {}\n", kafka.brokers,
                                TomlStrings(kafka.topics));
  out += OptionalString("group_id", kafka.group_id);
  out += OptionalString("assignment", kafka.assignment);
  out += OptionalString("start", kafka.start);
  if (!kafka.properties.empty()) {
    out += fmt::format("properties = {{ {} }}\n", kafka.properties);
  }
  return out + Lines(kafka.extra);
}

std::string JetStreamSection(const JetStreamToml& jetstream) {
  std::string out = fmt::format("[pipeline.jetstream]\nservers = \"{}\"\nstream = \"{}\"\n",
                                jetstream.servers, jetstream.stream);
  if (!jetstream.subjects.empty()) {  // none: `partitions` in `extra` (elastic mode)
    out += fmt::format("subjects = {}\n", TomlStrings(jetstream.subjects));
  }
  out += OptionalString("start", jetstream.start);
  return out + Lines(jetstream.extra);
}

std::string PipelineSection(const PipelineToml& pipeline) {
  std::string out = fmt::format("[[pipeline]]\nid = \"{}\"\n", pipeline.id);
  out += OptionalString("table", pipeline.table);
  out += OptionalString("schema", pipeline.schema);
  if (!pipeline.metadata_columns.empty()) {
    out += fmt::format("metadata_columns = {{ {} }}\n", pipeline.metadata_columns);
  }
  out += Lines(pipeline.keys);
  for (const std::string* section : {&pipeline.source, &pipeline.sections}) {
    if (!section->empty()) {
      out += "\n" + Lines(*section);
    }
  }
  if (pipeline.max_rows > 0 || !pipeline.max_latency.empty()) {
    out += "\n[pipeline.batch]\n";
    if (pipeline.max_rows > 0) {
      out += fmt::format("max_rows = {}\n", pipeline.max_rows);
    }
    out += OptionalString("max_latency", pipeline.max_latency);
  }
  return out + Lines(pipeline.after);
}

std::string WriteConfig(const std::filesystem::path& path,
                        const std::vector<PipelineToml>& pipelines, const std::string& top) {
  std::string text = Lines(top);
  for (const PipelineToml& pipeline : pipelines) {
    text += (text.empty() ? "" : "\n") + PipelineSection(pipeline);
  }
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace ferry::e2e
