// The peer ferry's JetStream numbers are compared with (docs/BENCHMARKS.md): a bare nats.c
// program reading a stream with the consumer ferry uses (an ordered push consumer, AckNone,
// pending limits unlimited) in batches of the same size: wait for the first message of a batch,
// then take what is buffered up to the batch size, touch every payload, release the batch.
//
//   nats_bare_consumer --server nats://127.0.0.1:4222 --stream bench --subject bench
//       --count 1000000 [--batch 1000] [--start-seq 1]
//
// Prints one line: messages, bytes, seconds, messages/s. Exit code 1 when fewer than --count
// messages arrive within 30 s of the last one.
#include <nats/nats.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string server = "nats://127.0.0.1:4222";
  std::string stream;
  std::string subject;
  int64_t count = 0;
  int batch = 1000;
  uint64_t start_seq = 1;
};

bool Parse(int argc, char** argv, Args* args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--server") {
      args->server = value;
    } else if (key == "--stream") {
      args->stream = value;
    } else if (key == "--subject") {
      args->subject = value;
    } else if (key == "--count") {
      args->count = std::atoll(value);
    } else if (key == "--batch") {
      args->batch = std::atoi(value);
    } else if (key == "--start-seq") {
      args->start_seq = std::strtoull(value, nullptr, 10);
    } else {
      return false;
    }
  }
  return (argc % 2) == 1 && !args->stream.empty() && !args->subject.empty() && args->count > 0 &&
         args->batch > 0 && args->start_seq > 0;
}

int Fail(const char* what, natsStatus status) {
  std::fprintf(stderr, "nats_bare_consumer: %s: %s\n", what, natsStatus_GetText(status));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!Parse(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: nats_bare_consumer --server URL --stream S --subject X --count N "
                 "[--batch B] [--start-seq Q]\n");
    return 2;
  }
  natsConnection* nc = nullptr;
  natsStatus s = natsConnection_ConnectTo(&nc, args.server.c_str());
  if (s != NATS_OK) {
    return Fail("connect", s);
  }
  jsCtx* js = nullptr;
  s = natsConnection_JetStream(&js, nc, nullptr);
  if (s != NATS_OK) {
    return Fail("jetstream", s);
  }
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = args.stream.c_str();
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = args.start_seq;
  natsSubscription* sub = nullptr;
  jsErrCode js_error;
  auto start = std::chrono::steady_clock::now();
  s = js_SubscribeSync(&sub, js, args.subject.c_str(), nullptr, &so, &js_error);
  if (s != NATS_OK) {
    return Fail("subscribe", s);
  }
  natsSubscription_SetPendingLimits(sub, -1, -1);

  std::vector<natsMsg*> batch;
  batch.reserve(static_cast<size_t>(args.batch));
  int64_t received = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
  while (received < args.count) {
    natsMsg* msg = nullptr;
    s = natsSubscription_NextMsg(&msg, sub, 30000);
    if (s != NATS_OK) {
      std::fprintf(stderr, "nats_bare_consumer: stopped after %lld messages: %s\n",
                   static_cast<long long>(received), natsStatus_GetText(s));
      return 1;
    }
    batch.push_back(msg);
    while (static_cast<int>(batch.size()) < args.batch &&
           received + static_cast<int64_t>(batch.size()) < args.count &&
           natsSubscription_NextMsg(&msg, sub, 0) == NATS_OK) {
      batch.push_back(msg);
    }
    for (natsMsg* m : batch) {
      int len = natsMsg_GetDataLength(m);
      bytes += static_cast<uint64_t>(len);
      checksum += len > 0 ? static_cast<unsigned char>(natsMsg_GetData(m)[0]) : 0;
      natsMsg_Destroy(m);
    }
    received += static_cast<int64_t>(batch.size());
    batch.clear();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "bare nats.c ordered consumer: %lld msgs, %llu bytes, %.3f s, %.0f msg/s (batch %d, "
      "checksum %llu)\n",
      static_cast<long long>(received), static_cast<unsigned long long>(bytes), seconds,
      static_cast<double>(received) / seconds, args.batch,
      static_cast<unsigned long long>(checksum));
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return 0;
}
