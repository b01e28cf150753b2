#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "kubeclient/kube_client.h"
#include "kubeclient/rest/http_wire.h"
#include "kubeclient/rest/line_splitter.h"
#include "kubeclient/rest/socket_connection.h"

namespace routestatus::kubeclient::rest {

// Watches and liveness probes go over sockets this process owns
// (SocketConnection) rather than cpprestsdk's: cpprest cancels a request by
// closing its socket from the cancelling thread while its I/O thread may be
// inside a TLS read of it, which crashed replicas (SIGSEGV in
// boost::asio's reactor). Here one thread reads a watch and Cancel() only
// fires a Wake, so cancelling at any moment is safe.

// A GET whose response head has arrived; the body is still on the
// connection. Move-only.
struct SocketResponse {
  ResponseHead head;
  std::unique_ptr<SocketConnection> conn;
  std::string buffered;  // body bytes read together with the head
};

// Where a GET goes and what it carries.
struct SocketGetRequest {
  std::string path;     // with the query; the server URL's path prefix is added
  std::string headers;  // extra header lines, each ending "\r\n"
  SteadyTime connect_deadline = SteadyTime::max();  // connected, handshaken, written
  SteadyTime head_deadline = SteadyTime::max();     // the response head read
};

// How far a failed SocketGet got.
enum class SocketGetStage { kConnect, kHead };

// Sends one GET on a new connection and reads its response head. On
// failure *stage tells whether the request was written (kHead) or not.
StatusOr<SocketResponse> SocketGet(const SocketTarget& target, const Clock& clock,
                                   const SocketGetRequest& request, std::shared_ptr<Wake> wake,
                                   SocketGetStage* stage);

// Reads the rest of `response`'s body, at most `max_bytes` of it, by
// `deadline`.
StatusOr<std::string> ReadBody(SocketResponse& response, size_t max_bytes, SteadyTime deadline);

// Asks the API server something cheap on another connection: Ok when it
// answered anything at all. Must end when `wake` fires.
using LivenessProbe = std::function<Status(const std::shared_ptr<Wake>& wake)>;

// When a silent watch probes the server, and with what.
struct WatchLiveness {
  Duration probe_after{};  // silence before a probe; zero = never probe
  LivenessProbe probe;
  // When this client last heard the server on any connection (the clock's
  // steady time in nanoseconds); the stream updates it as it reads.
  std::shared_ptr<std::atomic<int64_t>> heard;
};

// A watch's event stream over a SocketConnection. A silent watch is left
// open, however long it stays silent (a quiet resource gets no event and
// no bookmark from kube-apiserver's watch cache for up to its progress
// interval, ~10 min): after probe_after of silence it runs the probe, and
// ends kTimeout only when the server does not answer that either, or when
// the server has not ended the watch by `end` (its timeoutSeconds plus a
// margin). Next() is called by one thread; Cancel() from any. The stream
// holds its connection until destroyed.
class SocketWatchStream final : public WatchStream {
 public:
  SocketWatchStream(SocketResponse response, const Clock& clock, std::shared_ptr<Wake> wake,
                    std::string what, size_t max_line, SteadyTime end, WatchLiveness liveness);
  ~SocketWatchStream() override;

  StatusOr<WatchEvent> Next() override { return NextEvent(/*raw=*/false); }
  StatusOr<WatchEvent> NextRaw() override { return NextEvent(/*raw=*/true); }
  void Cancel() override;

 private:
  StatusOr<WatchEvent> NextEvent(bool raw);
  // Reads and decodes at least one more byte of the body.
  Status ReadMore();
  Status Finish(Status s);
  // The body ended: kClosed, or kUnavailable when it ended mid-event.
  Status EndOfStream() const;
  void NoteHeard();
  // The later of this stream's last byte and the client's last answer.
  SteadyTime HeardAnywhere() const;

  SocketResponse response_;
  const Clock& clock_;
  std::shared_ptr<Wake> wake_;
  const std::string what_;
  const size_t max_line_;
  const SteadyTime end_;
  WatchLiveness liveness_;
  BodyDecoder decoder_;
  LineSplitter splitter_;
  SteadyTime last_heard_;
  std::string decoded_;
  std::unique_ptr<char[]> buf_;
  Status final_;  // sticky: once failed or closed, Next() repeats it
};

}  // namespace routestatus::kubeclient::rest
