#include "kubeclient/rest/socket_watch.h"

#include <glog/logging.h>

namespace routestatus::kubeclient::rest {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

int64_t Nanos(SteadyTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string WholeSeconds(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

}  // namespace

StatusOr<SocketResponse> SocketGet(const SocketTarget& target, const Clock& clock,
                                   const SocketGetRequest& request, std::shared_ptr<Wake> wake,
                                   SocketGetStage* stage) {
  *stage = SocketGetStage::kConnect;
  auto conn = SocketConnection::Open(target, clock, request.connect_deadline, wake);
  if (!conn.ok()) return conn.status();
  std::string uri = target.server.path_prefix + request.path;
  if ((*conn)->absolute_form()) {
    uri = "http://" + target.server.Authority(!target.server.default_port) + uri;
  }
  std::string head = "GET " + uri + " HTTP/1.1\r\n" + request.headers;
  if ((*conn)->absolute_form() && !target.proxy.user.empty()) {
    // An http server through a proxy: the proxy reads the credentials from
    // each request (there is no CONNECT to carry them).
    std::string user = target.proxy.user + ":" + target.proxy.password;
    head += "Proxy-Authorization: Basic " + Base64Encode(user) + "\r\n";
  }
  head += "\r\n";
  if (Status s = (*conn)->WriteAll(head, request.connect_deadline); !s.ok()) return s;
  *stage = SocketGetStage::kHead;
  SocketResponse response;
  std::string received;
  char buf[16 * 1024];
  for (;;) {
    auto got = (*conn)->ReadSome(buf, sizeof(buf), request.head_deadline);
    if (!got.ok()) return got.status();
    if (*got == 0) {
      return Status(StatusCode::kUnavailable, "connection closed before the response head");
    }
    received.append(buf, *got);
    size_t consumed = 0;
    std::string error;
    HeadParse r = ParseResponseHead(received, &response.head, &consumed, &error);
    if (r == HeadParse::kInvalid) return Status(StatusCode::kUnavailable, error);
    if (r == HeadParse::kDone) {
      response.buffered = received.substr(consumed);
      break;
    }
  }
  response.conn = std::move(conn).value();
  return response;
}

StatusOr<std::string> ReadBody(SocketResponse& response, size_t max_bytes, SteadyTime deadline) {
  BodyDecoder decoder(response.head);
  std::string body, error;
  if (!decoder.Feed(response.buffered, &body, &error)) {
    return Status(StatusCode::kUnavailable, error);
  }
  response.buffered.clear();
  char buf[16 * 1024];
  while (!decoder.done() && body.size() < max_bytes) {
    auto got = response.conn->ReadSome(buf, sizeof(buf), deadline);
    if (!got.ok()) return got.status();
    if (*got == 0) {
      if (decoder.EndsAtClose()) break;
      return Status(StatusCode::kUnavailable, "connection closed mid-body");
    }
    if (!decoder.Feed(std::string_view(buf, *got), &body, &error)) {
      return Status(StatusCode::kUnavailable, error);
    }
  }
  if (body.size() > max_bytes) body.resize(max_bytes);
  return body;
}

SocketWatchStream::SocketWatchStream(SocketResponse response, const Clock& clock,
                                     std::shared_ptr<Wake> wake, std::string what,
                                     size_t max_line, SteadyTime end, WatchLiveness liveness)
    : response_(std::move(response)),
      clock_(clock),
      wake_(std::move(wake)),
      what_(std::move(what)),
      max_line_(max_line),
      end_(end),
      liveness_(std::move(liveness)),
      decoder_(response_.head),
      splitter_(max_line),
      last_heard_(clock.Now()),
      buf_(std::make_unique<char[]>(kReadChunk)) {
  std::string error;
  if (!decoder_.Feed(response_.buffered, &decoded_, &error)) {
    final_ = Status(StatusCode::kUnavailable, what_ + ": " + error);
  }
  response_.buffered.clear();
  splitter_.Feed(decoded_);
  decoded_.clear();
}

SocketWatchStream::~SocketWatchStream() { Cancel(); }

void SocketWatchStream::Cancel() { wake_->Fire(); }

Status SocketWatchStream::Finish(Status s) {
  final_ = s;
  // Why: the connection is of no further use; release the socket now.
  response_.conn.reset();
  return s;
}

SteadyTime SocketWatchStream::HeardAnywhere() const {
  if (!liveness_.heard) return last_heard_;
  const SteadyTime shared(std::chrono::duration_cast<SteadyTime::duration>(
      std::chrono::nanoseconds(liveness_.heard->load(std::memory_order_relaxed))));
  return std::max(last_heard_, shared);
}

void SocketWatchStream::NoteHeard() {
  last_heard_ = clock_.Now();
  if (liveness_.heard) liveness_.heard->store(Nanos(last_heard_), std::memory_order_relaxed);
}

StatusOr<WatchEvent> SocketWatchStream::NextEvent(bool raw) {
  if (!final_.ok()) return final_;
  for (;;) {
    std::string_view line;
    switch (splitter_.Next(&line)) {
      case LineSplitter::Result::kLine: {
        if (line.empty()) continue;
        auto ev = raw ? DecodeWatchEventText(line) : DecodeWatchEvent(line);
        if (!ev.ok()) {
          LOG(WARNING) << what_ << ": undecodable watch event (" << ev.status().message() << "), "
                       << line.size() << " bytes";
          return Finish(
              Status(StatusCode::kInvalid, what_ + ": bad watch event: " + ev.status().message()));
        }
        return ev;
      }
      case LineSplitter::Result::kTooLong:
        return Finish(Status(StatusCode::kInvalid, what_ + ": watch event larger than " +
                                                       std::to_string(max_line_) + " bytes"));
      case LineSplitter::Result::kNeedMore:
        break;
    }
    if (Status s = ReadMore(); !s.ok()) return Finish(s);
  }
}

Status SocketWatchStream::EndOfStream() const {
  if (splitter_.pending() > 0) {
    return Status(StatusCode::kUnavailable, what_ + ": watch stream truncated mid-event (" +
                                                std::to_string(splitter_.pending()) + " bytes)");
  }
  return Status(StatusCode::kClosed, what_ + ": watch closed by the server");
}

Status SocketWatchStream::ReadMore() {
  for (;;) {
    if (wake_->fired()) return Status(StatusCode::kCancelled, what_ + ": cancelled");
    if (decoder_.done()) return EndOfStream();
    const bool probing = liveness_.probe && liveness_.probe_after > Duration::zero();
    SteadyTime deadline = end_;
    if (probing) deadline = std::min(deadline, HeardAnywhere() + liveness_.probe_after);
    auto got = response_.conn->ReadSome(buf_.get(), kReadChunk, deadline);
    if (got.ok() && *got > 0) {
      NoteHeard();
      std::string error;
      if (!decoder_.Feed(std::string_view(buf_.get(), *got), &decoded_, &error)) {
        return Status(StatusCode::kUnavailable, what_ + ": " + error);
      }
      if (decoded_.empty()) continue;  // framing only
      splitter_.Feed(decoded_);
      decoded_.clear();
      return Status::Ok();
    }
    if (got.ok()) return EndOfStream();
    const Status& s = got.status();
    if (s.code() == StatusCode::kCancelled) return Status(StatusCode::kCancelled, what_ + ": cancelled");
    if (s.code() != StatusCode::kTimeout) return Status(s.code(), what_ + ": " + s.message());
    if (clock_.Now() >= end_) {
      return Status(StatusCode::kTimeout,
                    what_ + ": timed out: the server did not end the watch at its timeoutSeconds");
    }
    // Why again: another connection may have heard the server meanwhile.
    if (clock_.Now() < HeardAnywhere() + liveness_.probe_after) continue;
    // Silence: healthy on a quiet resource. Ask the server on another
    // connection whether it is there at all.
    const SteadyTime silent_since = last_heard_;
    Status answered = liveness_.probe(wake_);
    if (answered.code() == StatusCode::kCancelled) {
      return Status(StatusCode::kCancelled, what_ + ": cancelled");
    }
    if (!answered.ok()) {
      return Status(StatusCode::kTimeout,
                    what_ + ": timed out: nothing received for " +
                        WholeSeconds(clock_.Now() - silent_since) +
                        " and the API server did not answer on a new connection either (" +
                        answered.message() + "); the connection is presumed dead");
    }
    VLOG(2) << what_ << ": quiet for " << WholeSeconds(clock_.Now() - silent_since)
            << "; the API server answers, the watch stays open";
    last_heard_ = clock_.Now();
  }
}

}  // namespace routestatus::kubeclient::rest
