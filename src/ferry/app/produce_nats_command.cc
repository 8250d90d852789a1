#include "ferry/app/produce_nats_command.h"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "ferry/app/message_template.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/nats_connect.h"
#include "ferry/source/jetstream/nats_error.h"
#include "ferry/source/jetstream/nats_handles.h"

namespace ferry::app {
namespace {

namespace js = ferry::source::jetstream;

struct ProduceNatsOptions {
  js::NatsConnectionOptions connection;
  std::string stream;
  std::string subject;
  std::string stream_subject;  // --create-stream's subject; empty: `subject`
  std::string template_text;
  int64_t count = 0;
  int64_t first = 1;  // the {{seq}} of the first message
  double rate = 0;    // messages per second; 0: as fast as the acks allow
  bool msg_id = false;
  bool create_stream = false;
  int64_t max_pending = 4096;
};

// What the PubAck callback (a nats.c thread) reports to the publishing thread.
struct AckCounts {
  std::string stream;  // the stream every PubAck must name; set before publishing
  std::atomic<int64_t> acked{0};
  std::atomic<int64_t> duplicates{0};
  std::atomic<int64_t> failed{0};
  std::atomic<uint64_t> first_seq{std::numeric_limits<uint64_t>::max()};
  std::atomic<uint64_t> last_seq{0};
  std::mutex mu;
  std::string first_error;  // guarded by mu
};

void OnPubAck(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error, void* closure) {
  auto* counts = static_cast<AckCounts*>(closure);
  if (ack != nullptr && (ack->Stream == nullptr || counts->stream != ack->Stream)) {
    counts->failed.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(counts->mu);
    if (counts->first_error.empty()) {
      counts->first_error = fmt::format("stored in stream '{}', not '{}'",
                                        ack->Stream != nullptr ? ack->Stream : "", counts->stream);
    }
  } else if (ack != nullptr) {
    counts->acked.fetch_add(1, std::memory_order_relaxed);
    if (ack->Duplicate) {
      counts->duplicates.fetch_add(1, std::memory_order_relaxed);
    }
    uint64_t seq = ack->Sequence;
    uint64_t lo = counts->first_seq.load(std::memory_order_relaxed);
    while (seq < lo && !counts->first_seq.compare_exchange_weak(lo, seq)) {
    }
    uint64_t hi = counts->last_seq.load(std::memory_order_relaxed);
    while (seq > hi && !counts->last_seq.compare_exchange_weak(hi, seq)) {
    }
  } else {
    counts->failed.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(counts->mu);
    if (counts->first_error.empty() && error != nullptr) {
      counts->first_error =
          error->ErrText != nullptr ? error->ErrText : natsStatus_GetText(error->Err);
    }
  }
  natsMsg_Destroy(msg);
}

Status EnsureStream(jsCtx* ctx, const ProduceNatsOptions& options) {
  jsStreamInfo* raw = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_GetStreamInfo(&raw, ctx, options.stream.c_str(), nullptr, &js_error);
  js::JsStreamInfoPtr info(raw);
  if (status == NATS_OK) {
    return Status::OK();
  }
  if (js_error != JSStreamNotFoundErr && status != NATS_NOT_FOUND) {
    return js::NatsError(status, fmt::format("get info of stream '{}'", options.stream), js_error);
  }
  // Limits retention and file storage: what exactly-once ingestion needs (docs/jetstream.md).
  const std::string& stream_subject =
      options.stream_subject.empty() ? options.subject : options.stream_subject;
  const char* subjects[] = {stream_subject.c_str()};
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = options.stream.c_str();
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Retention = js_LimitsPolicy;
  config.Storage = js_FileStorage;
  status = js_AddStream(&raw, ctx, &config, nullptr, &js_error);
  info.reset(raw);
  if (status != NATS_OK) {
    return js::NatsError(status, fmt::format("create stream '{}'", options.stream), js_error);
  }
  std::fprintf(stderr,
               "ferry: created stream '%s' (subject '%s', limits retention, file storage)\n",
               options.stream.c_str(), stream_subject.c_str());
  return Status::OK();
}

// Publishes one message, waiting while the library holds max_pending unacknowledged ones.
Status PublishOne(jsCtx* ctx, const ProduceNatsOptions& options, const std::string& payload,
                  const std::string& msg_id) {
  // No ExpectStream: it travels as a header stored with every message; OnPubAck checks the
  // stream named in the PubAck instead.
  jsPubOptions pub;
  jsPubOptions_Init(&pub);
  if (!msg_id.empty()) {
    pub.MsgId = msg_id.c_str();
  }
  while (true) {
    natsStatus status = js_PublishAsync(ctx, options.subject.c_str(), payload.data(),
                                        static_cast<int>(payload.size()), &pub);
    if (status == NATS_OK) {
      return Status::OK();
    }
    if (status != NATS_TIMEOUT) {  // NATS_TIMEOUT: stalled on max_pending; keep waiting
      return js::NatsError(status, fmt::format("publish to '{}'", options.subject));
    }
  }
}

Status RunProduceNats(const ProduceNatsOptions& options) {
  FERRY_RETURN_IF_ERROR(options.connection.Validate());
  if (options.count < 0 || options.max_pending <= 0 || options.rate < 0) {
    return InvalidArgument("--count, --max-pending and --rate must not be negative");
  }
  // The template syntax shared with `ferry produce kafka` ({{seq}}, {{now:...}}, {{rand:N}}, ...).
  FERRY_ASSIGN_OR_RETURN(MessageTemplate payload_template,
                         MessageTemplate::Parse(options.template_text));
  FERRY_ASSIGN_OR_RETURN(js::NatsConnectionPtr connection, js::ConnectNats(options.connection));
  AckCounts counts;
  counts.stream = options.stream;
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.PublishAsync.MaxPending = options.max_pending;
  js_options.PublishAsync.AckHandler = OnPubAck;
  js_options.PublishAsync.AckHandlerClosure = &counts;
  js_options.PublishAsync.StallWait = 1000;
  // Declared after the connection: destroyed first.
  FERRY_ASSIGN_OR_RETURN(
      js::JsCtxPtr ctx,
      js::OpenJetStream(connection.get(), options.connection.api_timeout_ms, &js_options));
  if (options.create_stream) {
    FERRY_RETURN_IF_ERROR(EnsureStream(ctx.get(), options));
  }

  const auto start = std::chrono::steady_clock::now();
  std::string payload;
  std::string msg_id;
  for (int64_t i = 0; i < options.count; ++i) {
    int64_t seq = options.first + i;
    if (options.rate > 0) {
      auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(static_cast<double>(i) / options.rate));
      std::this_thread::sleep_until(due);
    }
    payload_template.Render(seq, &payload);
    if (options.msg_id) {
      msg_id = options.subject + "-" + std::to_string(seq);
    }
    FERRY_RETURN_IF_ERROR(PublishOne(ctx.get(), options, payload, msg_id));
  }
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = 60000;
  natsStatus status = js_PublishAsyncComplete(ctx.get(), &wait);
  if (status != NATS_OK) {
    return js::NatsError(status, "wait for the last PubAcks");
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t failed = counts.failed.load();
  if (failed > 0 || counts.acked.load() != options.count) {
    std::lock_guard<std::mutex> lock(counts.mu);
    return Unavailable("{} of {} messages to '{}' were not acknowledged by stream '{}'{}{}",
                       options.count - counts.acked.load(), options.count, options.subject,
                       options.stream,
                       counts.first_error.empty() ? "" : "; first error: ", counts.first_error);
  }
  std::printf(
      "published %lld messages to subject '%s' of stream '%s' (sequences %llu..%llu, %lld "
      "duplicates) in %.2f s (%.0f msg/s)\n",
      static_cast<long long>(options.count), options.subject.c_str(), options.stream.c_str(),
      options.count > 0 ? static_cast<unsigned long long>(counts.first_seq.load()) : 0ULL,
      static_cast<unsigned long long>(counts.last_seq.load()),
      static_cast<long long>(counts.duplicates.load()), seconds,
      seconds > 0 ? static_cast<double>(options.count) / seconds : 0.0);
  return Status::OK();
}

CLI::App* ProduceGroup(CLI::App& app) {
  std::vector<CLI::App*> found =
      app.get_subcommands([](CLI::App* sub) { return sub->get_name() == "produce"; });
  if (!found.empty()) {
    return found.front();
  }
  CLI::App* produce = app.add_subcommand("produce", "Publish test messages to a broker");
  produce->require_subcommand(1);
  return produce;
}

}  // namespace

void RegisterProduceNatsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ProduceNatsOptions>();
  CLI::App* cmd = ProduceGroup(app)->add_subcommand(
      "nats", "Publish N templated messages to a JetStream subject, checking every PubAck");
  cmd->add_option("--server", options->connection.servers, "NATS server URL (repeatable)")
      ->required();
  cmd->add_option("--stream", options->stream, "JetStream stream name")->required();
  cmd->add_option("--subject", options->subject, "Subject to publish to")->required();
  cmd->add_option("--count", options->count, "Number of messages")->required();
  cmd->add_option(
         "--template", options->template_text,
         "Payload template, as for produce kafka: {{seq}} (or {{Count}}), {{now:PATTERN}}, "
         "{{rand:N}}, {{uuid}}, {{cycle:A,B,...}}")
      ->required();
  cmd->add_option("--first", options->first, "Number of the first message (default 1)");
  cmd->add_option("--rate", options->rate, "Messages per second (default: unlimited)");
  cmd->add_flag("--msg-id", options->msg_id,
                "Set Nats-Msg-Id to <subject>-<number> (the server drops re-publishes within "
                "its duplicate window)");
  cmd->add_flag("--create-stream", options->create_stream,
                "Create the stream (limits retention, file storage) if it does not exist");
  cmd->add_option("--stream-subject", options->stream_subject,
                  "The subject --create-stream gives the stream (default --subject), e.g. "
                  "'orders.>' to publish its partitions one --subject at a time");
  cmd->add_option("--max-pending", options->max_pending,
                  "Most unacknowledged publishes in flight (default 4096)");
  cmd->add_option("--user", options->connection.auth.user, "User name");
  cmd->add_option("--password", options->connection.auth.password, "Password");
  cmd->add_option("--token", options->connection.auth.token, "Authentication token");
  cmd->add_option("--creds", options->connection.auth.creds_file, "Credentials (.creds) file");
  cmd->add_option("--nkey", options->connection.auth.nkey, "Public user NKey");
  cmd->add_option("--nkey-seed-file", options->connection.auth.nkey_seed_file, "NKey seed file");
  cmd->add_option("--tls-ca", options->connection.tls.ca_file, "Trusted CA certificates (PEM)");
  cmd->add_option("--tls-cert", options->connection.tls.cert_file, "Client certificate (PEM)");
  cmd->add_option("--tls-key", options->connection.tls.key_file, "Client key (PEM)");
  cmd->callback([options, exit_code] {
    options->connection.name = "ferry produce";
    Status status = RunProduceNats(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "ferry produce nats: %s\n", status.ToString().c_str());
      *exit_code = 1;
    }
  });
}

}  // namespace ferry::app
