#include "apiserver/etcd_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "apiserver/continue_token.h"

namespace routestatus::apiserver {

namespace {

using nlohmann::json;

// etcd's gateway writes int64 fields as JSON strings; absent means 0.
int64_t EtcdInt64(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (!it->is_string()) return 0;
  return std::strtoll(it->get<std::string>().c_str(), nullptr, 10);
}

int64_t HeaderRevision(const json& answer) {
  auto header = answer.find("header");
  return header == answer.end() ? 0 : EtcdInt64(*header, "revision");
}

std::string EtcdBytes(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_string()) return "";
  return Base64Decode(it->get<std::string>()).value_or("");
}

void SetEtcdSocketTimeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(const std::string& endpoint,
                                                         Options options) {
  auto url = kubeclient::rest::ParseServerUrl(endpoint);
  if (!url.ok()) return url.status();
  if (url->tls) {
    return Status(StatusCode::kInvalid, "etcd endpoint " + endpoint + ": only http is served");
  }
  return std::unique_ptr<EtcdClient>(new EtcdClient(endpoint, *url, options));
}

EtcdClient::EtcdClient(std::string endpoint, kubeclient::rest::ServerUrl url, Options options)
    : endpoint_(std::move(endpoint)), url_(std::move(url)), options_(options) {}

EtcdClient::~EtcdClient() {
  for (int fd : idle_) close(fd);
}

std::string EtcdClient::PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff) end.pop_back();
  if (end.empty()) return std::string(1, '\0');  // etcd: every key
  ++end.back();
  return end;
}

StatusOr<int64_t> EtcdClient::Txn(const std::vector<EtcdOp>& ops) {
  json success = json::array();
  for (const EtcdOp& op : ops) {
    if (op.value) {
      success.push_back(
          {{"requestPut", {{"key", Base64Encode(op.key)}, {"value", Base64Encode(*op.value)}}}});
    } else {
      success.push_back({{"requestDeleteRange", {{"key", Base64Encode(op.key)}}}});
    }
  }
  auto answer = Call("/v3/kv/txn", {{"success", std::move(success)}});
  if (!answer.ok()) return answer.status();
  return HeaderRevision(*answer);
}

StatusOr<int64_t> EtcdClient::DeleteRange(const std::string& key, const std::string& range_end) {
  json body = {{"key", Base64Encode(key)}};
  if (!range_end.empty()) body["range_end"] = Base64Encode(range_end);
  auto answer = Call("/v3/kv/deleterange", body);
  if (!answer.ok()) return answer.status();
  return HeaderRevision(*answer);
}

StatusOr<EtcdRange> EtcdClient::Range(const std::string& key, const std::string& range_end,
                                      int64_t limit, int64_t revision) {
  json body = {{"key", Base64Encode(key)}, {"range_end", Base64Encode(range_end)}};
  if (limit > 0) body["limit"] = std::to_string(limit);
  if (revision > 0) body["revision"] = std::to_string(revision);
  auto answer = Call("/v3/kv/range", body);
  if (!answer.ok()) return answer.status();
  EtcdRange out;
  out.revision = HeaderRevision(*answer);
  out.count = EtcdInt64(*answer, "count");
  out.more = answer->value("more", false);
  auto kvs = answer->find("kvs");
  if (kvs != answer->end() && kvs->is_array()) {
    out.kvs.reserve(kvs->size());
    for (const json& kv : *kvs) {
      out.kvs.push_back({EtcdBytes(kv, "key"), EtcdBytes(kv, "value"), EtcdInt64(kv, "mod_revision")});
    }
  }
  return out;
}

StatusOr<json> EtcdClient::Call(const std::string& path, const json& body) {
  const std::string payload = body.dump();
  const std::string request = "POST " + path + " HTTP/1.1\r\nHost: " + url_.Authority(true) +
                              "\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(payload.size()) + "\r\n\r\n" + payload;
  // Why a second attempt: a pooled connection etcd has closed while idle
  // fails at once; a fresh one does not. A fresh connection is not retried.
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = TakeConnection();
    const bool pooled = fd >= 0;
    if (!pooled) {
      auto connected = Connect();
      if (!connected.ok()) return connected.status();
      fd = *connected;
    }
    bool reusable = false;
    StatusOr<json> answer = Exchange(fd, request, &reusable);
    if (reusable) {
      ReturnConnection(fd);
    } else {
      close(fd);
    }
    if (answer.ok() || !pooled || answer.status().code() != StatusCode::kUnavailable) {
      return answer;
    }
  }
  return Status(StatusCode::kUnavailable, "etcd " + endpoint_ + path + ": connection lost");
}

StatusOr<json> EtcdClient::Exchange(int fd, const std::string& request, bool* reusable) {
  *reusable = false;
  const std::string where = "etcd " + endpoint_;
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      return Status(StatusCode::kUnavailable, where + ": send: " + std::strerror(errno));
    }
    sent += static_cast<size_t>(n);
  }
  std::string buffer;
  std::string body;
  kubeclient::rest::ResponseHead head;
  std::optional<kubeclient::rest::BodyDecoder> decoder;
  char chunk[64 * 1024];
  while (!decoder || !decoder->done()) {
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0) return Status(StatusCode::kUnavailable, where + ": recv: " + std::strerror(errno));
    if (n == 0) {
      if (decoder && decoder->EndsAtClose()) break;
      return Status(StatusCode::kUnavailable, where + ": connection closed mid-answer");
    }
    std::string error;
    std::string_view in(chunk, static_cast<size_t>(n));
    if (!decoder) {
      buffer.append(in);
      size_t consumed = 0;
      auto parsed = kubeclient::rest::ParseResponseHead(buffer, &head, &consumed, &error);
      if (parsed == kubeclient::rest::HeadParse::kNeedMore) continue;
      if (parsed == kubeclient::rest::HeadParse::kInvalid) {
        return Status(StatusCode::kInternal, where + ": bad answer: " + error);
      }
      decoder.emplace(head);
      in = std::string_view(buffer).substr(consumed);
    }
    if (!decoder->Feed(in, &body, &error)) {
      return Status(StatusCode::kInternal, where + ": bad answer: " + error);
    }
  }
  *reusable = decoder->done() && !decoder->EndsAtClose();
  json answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (head.status != 200) {
    std::string message = answer.is_object() ? answer.value("message", answer.value("error", ""))
                                             : body.substr(0, 200);
    return Status(StatusCode::kInternal,
                  where + ": HTTP " + std::to_string(head.status) + ": " + message);
  }
  if (!answer.is_object()) {
    return Status(StatusCode::kInternal, where + ": answer is not a JSON object");
  }
  return answer;
}

int EtcdClient::TakeConnection() {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.empty()) return -1;
  int fd = idle_.back();
  idle_.pop_back();
  return fd;
}

void EtcdClient::ReturnConnection(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(fd);
}

StatusOr<int> EtcdClient::Connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(url_.port);
  int rc = getaddrinfo(url_.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return Status(StatusCode::kUnavailable, "etcd " + endpoint_ + ": " + gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    SetEtcdSocketTimeouts(fd, options_.timeout);
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      freeaddrinfo(found);
      return fd;
    }
    error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  return Status(StatusCode::kUnavailable, "etcd " + endpoint_ + ": connect: " + error);
}

}  // namespace routestatus::apiserver
