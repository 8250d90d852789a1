// StreamInfoClient: the JetStream source's own requests to the server about its stream (the
// stream's info, the last message of a filter subject), on a control connection of their own,
// and the checks the source makes of that info before it reads (retention, filters).
//
// Why a connection of its own (jetstream_source.h, step 7): on the source's data connection each
// reply would wait behind the messages the server already pushed to the ordered consumers (up to
// a flow-control window per consumer: 32 MiB on 2.10+), while the pipeline thread waits for it.
// nats.c reconnects the control connection by itself; when its reconnect attempts run out
// (closed() is true) the source opens it again with Connect().
//
// Thread-safety: none; used by the source's thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/nats_handles.h"
#include "ferry/source/source.h"

namespace ferry::source::jetstream {

class StreamInfoClient {
 public:
  // Connects only in Connect().
  StreamInfoClient(NatsConnectionOptions connection, std::string stream);
  ~StreamInfoClient() { Close(); }

  StreamInfoClient(const StreamInfoClient&) = delete;
  StreamInfoClient& operator=(const StreamInfoClient&) = delete;

  // (Re)opens the control connection. Errors as ConnectNats (nats_connect.h).
  Status Connect();
  // Closes the connection (no-op when none is open).
  void Close();
  // No connection, or nats.c gave up reconnecting it: Connect() again before the next request.
  bool closed() const;

  // The stream's info. NotFound when there is no such stream; Unavailable when the server does
  // not answer in time.
  Result<JsStreamInfoPtr> Info();
  // The stream sequence of the last message on `subject` (nullopt when the stream holds none);
  // `what` names the partition in errors.
  Result<std::optional<uint64_t>> LastSequence(const std::string& subject, std::string_view what);
  // The head of partition `key` (filter `subject`) in a stream in `state`: the stream's first
  // sequence, and its last one when the filter covers the whole stream, else the last sequence
  // on the filter (one request).
  Result<PartitionHead> Head(const jsStreamState& state, const std::string& subject,
                             bool covers_stream, const std::string& key);

 private:
  const NatsConnectionOptions options_;
  const std::string stream_;
  // The context before the connection it belongs to is destroyed (reverse declaration order).
  NatsConnectionPtr connection_;
  JsCtxPtr js_;
};

// The checks of step 1 of jetstream_source.h. InvalidArgument:
//   - for WorkQueue and Interest retention: both delete messages on ack or delivery, so nothing
//     could be re-read from a position committed in the table;
//   - for a filter that matches none of the subjects of a stream whose own subjects are all its
//     messages' subjects (no mirror and no sources): such a consumer would wait forever on
//     nats-server 2.10+ (2.9 refused it itself). With `elastic`, a warning instead: elastic
//     partitions often come from a subject transform of the stream, which nats.c 3.4.1 does not
//     read from the stream info.
Status CheckStream(const jsStreamInfo& info, const std::string& stream,
                   const std::vector<std::string>& filters, bool elastic);

}  // namespace ferry::source::jetstream
