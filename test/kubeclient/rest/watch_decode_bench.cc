// Micro-benchmark (not a test): watch lines/s through LineSplitter +
// DecodeWatchEvent, and end-to-end through the cpprest watch reader against
// a raw local server. Usage: kubeclient_rest_watch_decode_bench [events]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kubeclient/kube_client.h"
#include "kubeclient/rest/line_splitter.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/raw_http_server.h"

namespace rk = routestatus::kubeclient;
namespace rr = routestatus::kubeclient::rest;

namespace {

std::string Event(int i) {
  return R"({"type":"MODIFIED","object":{"apiVersion":"route.openshift.io/v1","kind":"Route",)"
         R"("metadata":{"name":"route-)" +
         std::to_string(i) +
         R"(","namespace":"ns-7","uid":"0b0d8a8e-5a1c-4c56-9a8e-6f3c2d9e4b1a",)"
         R"("resourceVersion":")" +
         std::to_string(100000 + i) +
         R"(","generation":1,"creationTimestamp":"2026-11-29T14:00:00Z",)"
         R"("labels":{"app":"web","shard":"a"}},"spec":{"host":"route-)" +
         std::to_string(i) +
         R"(.apps.example.com","path":"/","to":{"kind":"Service","name":"web","weight":100},)"
         R"("port":{"targetPort":"http"},"tls":{"termination":"edge"},"wildcardPolicy":"None"},)"
         R"("status":{"ingress":[{"routerName":"default","host":"route.apps.example.com",)"
         R"("routerCanonicalHostname":"router-default.apps.example.com","wildcardPolicy":"None",)"
         R"("conditions":[{"type":"Admitted","status":"True",)"
         R"("lastTransitionTime":"2026-11-29T14:00:00Z"}]}]}}})"
         "\n";
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 200000;
  std::string stream;
  for (int i = 0; i < n; ++i) stream += Event(i);
  std::printf("%d events, %.1f MB, %zu bytes/event\n", n, stream.size() / 1e6, stream.size() / n);

  // 1. In memory: split in 16 KiB chunks and decode.
  auto start = std::chrono::steady_clock::now();
  rr::LineSplitter splitter;
  int decoded = 0;
  for (size_t off = 0; off < stream.size(); off += 16384) {
    splitter.Feed(std::string_view(stream).substr(off, 16384));
    std::string_view line;
    while (splitter.Next(&line) == rr::LineSplitter::Result::kLine) {
      if (rk::DecodeWatchEvent(line).ok()) ++decoded;
    }
  }
  double t = Seconds(std::chrono::steady_clock::now() - start);
  std::printf("split+decode: %d events in %.3f s = %.0f events/s, %.0f MB/s\n", decoded, t,
              decoded / t, stream.size() / t / 1e6);

  // 1b. Split only.
  start = std::chrono::steady_clock::now();
  rr::LineSplitter split_only;
  int lines = 0;
  for (size_t off = 0; off < stream.size(); off += 16384) {
    split_only.Feed(std::string_view(stream).substr(off, 16384));
    std::string_view line;
    while (split_only.Next(&line) == rr::LineSplitter::Result::kLine) ++lines;
  }
  t = Seconds(std::chrono::steady_clock::now() - start);
  std::printf("split only:   %d lines in %.3f s = %.0f MB/s\n", lines, t, stream.size() / t / 1e6);

  // 2. Over HTTP through cpprest (chunked body, 64 KiB chunks).
  rr::RawHttpServer server([&](rr::RawHttpServer&, int fd, const std::string&) {
    rr::RawHttpServer::StartChunked(fd);
    for (size_t off = 0; off < stream.size(); off += 65536) {
      rr::RawHttpServer::Chunk(fd, std::string_view(stream).substr(off, 65536));
    }
    rr::RawHttpServer::Chunk(fd, "");
  });
  routestatus::RealClock clock;
  rr::RestConfig cfg;
  cfg.server = server.url();
  auto client = rr::NewRestKubeClient(cfg, clock);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  start = std::chrono::steady_clock::now();
  auto w = (*client)->Watch(rk::RoutesResource(), "", {});
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
    return 1;
  }
  int got = 0;
  for (;;) {
    auto ev = (*w)->Next();
    if (!ev.ok()) {
      if (ev.status().code() != routestatus::StatusCode::kClosed) {
        std::fprintf(stderr, "watch: %s\n", ev.status().ToString().c_str());
      }
      break;
    }
    ++got;
  }
  t = Seconds(std::chrono::steady_clock::now() - start);
  std::printf("http watch:   %d events in %.3f s = %.0f events/s, %.0f MB/s\n", got, t, got / t,
              stream.size() / t / 1e6);
  return got == n && decoded == n ? 0 : 1;
}
