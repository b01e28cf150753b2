// apiserver_bench: scale figures for the embedded API server (not a test).
// Holds N routes (default 100000), lists them over HTTP in pages of 500,
// fans status updates out to W watchers (default 20) and measures the
// sustained status-update rate over HTTP with C client threads. Also lists
// them as server-side Tables (what kubectl get asks for).
//   apiserver_bench [routes] [watchers] [updates] [clients]

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "apiserver/server.h"
#include "test/apiserver/http_client.h"

namespace {

using nlohmann::json;
using routestatus::apiserver::Server;
using routestatus::apiserver::ServerOptions;
using routestatus::apiserver::testing::LineStream;
using routestatus::apiserver::testing::TinyHttpClient;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

long RssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

json MakeRoute(int i) {
  std::string name = "route-" + std::to_string(i);
  std::string ns = "ns-" + std::to_string(i % 100);
  return {{"apiVersion", "route.openshift.io/v1"},
          {"kind", "Route"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{"app", name}, {"shard", i % 2 ? "a" : "b"}}},
            {"annotations", {{"openshift.io/host.generated", "false"}}}}},
          {"spec",
           {{"host", name + "." + ns + ".apps.example.com"},
            {"path", "/"},
            {"to", {{"kind", "Service"}, {"name", name}, {"weight", 100}}},
            {"port", {{"targetPort", "http"}}},
            {"tls", {{"termination", "edge"}, {"insecureEdgeTerminationPolicy", "Redirect"}}},
            {"wildcardPolicy", "None"}}},
          {"status",
           {{"ingress",
             json::array({{{"routerName", "default"},
                           {"host", name + "." + ns + ".apps.example.com"},
                           {"routerCanonicalHostname", "router-default.apps.example.com"},
                           {"wildcardPolicy", "None"},
                           {"conditions",
                            json::array({{{"type", "Admitted"},
                                          {"status", "True"},
                                          {"lastTransitionTime", "2026-11-29T14:00:00Z"}}})}}})}}}};
}

}  // namespace

int main(int argc, char** argv) {
  int routes = argc > 1 ? std::atoi(argv[1]) : 100000;
  int watchers = argc > 2 ? std::atoi(argv[2]) : 20;
  int updates = argc > 3 ? std::atoi(argv[3]) : 20000;
  int clients = argc > 4 ? std::atoi(argv[4]) : 4;

  ServerOptions options;
  options.watch_history = 50000;
  options.watcher_buffer = 200000;
  Server server(options);
  if (!server.Start().ok()) return 1;
  long rss0 = RssMb();
  auto t0 = Clock::now();
  for (int n = 0; n < 100; ++n) server.CreateNamespace("ns-" + std::to_string(n));
  for (int i = 0; i < routes; ++i) {
    if (!server.CreateRoute(MakeRoute(i)).ok()) {
      std::fprintf(stderr, "seeding failed at %d\n", i);
      return 1;
    }
  }
  std::printf("seed: %d routes in %.2f s (%.0f/s), RSS %ld MB -> %ld MB (%.0f bytes/route)\n",
              routes, Seconds(t0), routes / Seconds(t0), rss0, RssMb(),
              (RssMb() - rss0) * 1048576.0 / routes);

  TinyHttpClient http(server.port(), "", /*keep_alive=*/true);
  t0 = Clock::now();
  std::string cont;
  size_t listed = 0;
  int pages = 0;
  size_t bytes = 0;
  do {
    std::string path = "/apis/route.openshift.io/v1/routes?limit=500";
    if (!cont.empty()) path += "&continue=" + cont;
    auto r = http.Get(path);
    // Why: count items and find the token without a full parse, so the
    // figure measures the server rather than the client's JSON parser.
    for (size_t pos = 0; (pos = r.body.find("\"kind\":\"Route\"", pos)) != std::string::npos; ++pos) {
      ++listed;
    }
    bytes += r.body.size();
    ++pages;
    size_t c = r.body.rfind("\"continue\":\"");
    cont = c == std::string::npos ? "" : r.body.substr(c + 12, r.body.find('"', c + 12) - c - 12);
  } while (!cont.empty());
  std::printf("list: %zu routes in %d pages of 500 in %.2f s (%.1f MB), RSS %ld MB\n", listed,
              pages, Seconds(t0), bytes / 1048576.0, RssMb());

  // What `kubectl get routes -A` costs: server-side Table rows, first in
  // kubectl's pages of 500, then in one response.
  const std::map<std::string, std::string> table_accept = {
      {"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}};
  for (int limit : {500, 0}) {
    t0 = Clock::now();
    size_t rows = 0;
    pages = 0;
    bytes = 0;
    cont.clear();
    do {
      std::string path = "/apis/route.openshift.io/v1/routes?limit=" + std::to_string(limit);
      if (!cont.empty()) path += "&continue=" + cont;
      auto r = http.Request("GET", path, "", "application/json", table_accept);
      for (size_t pos = 0; (pos = r.body.find("{\"cells\":", pos)) != std::string::npos; ++pos) ++rows;
      bytes += r.body.size();
      ++pages;
      size_t c = r.body.rfind("\"continue\":\"");
      cont = c == std::string::npos ? "" : r.body.substr(c + 12, r.body.find('"', c + 12) - c - 12);
    } while (!cont.empty());
    std::printf("table list: %zu rows in %d page(s) (limit=%d) in %.2f s (%.1f MB), RSS %ld MB\n",
                rows, pages, limit, Seconds(t0), bytes / 1048576.0, RssMb());
    if (rows != static_cast<size_t>(routes)) return 1;
  }

  std::string from = std::to_string(server.store().CurrentRv());
  std::vector<std::unique_ptr<LineStream>> streams;
  for (int w = 0; w < watchers; ++w) {
    streams.push_back(std::make_unique<LineStream>(
        server.port(), "/apis/route.openshift.io/v1/routes?watch=1&resourceVersion=" + from));
  }
  std::vector<std::atomic<int>> received(static_cast<size_t>(watchers));
  std::vector<std::thread> readers;
  for (int w = 0; w < watchers; ++w) {
    readers.emplace_back([&, w] {
      while (received[w] < updates) {
        auto line = streams[w]->NextLine(std::chrono::milliseconds(20000));
        if (!line) break;
        ++received[w];
      }
    });
  }
  // Status updates: each client thread rewrites status of its own routes.
  t0 = Clock::now();
  std::atomic<int> done{0}, failed{0};
  std::vector<std::thread> writers;
  for (int c = 0; c < clients; ++c) {
    writers.emplace_back([&, c] {
      TinyHttpClient client(server.port(), "", /*keep_alive=*/true);
      for (int k = c; k < updates; k += clients) {
        int i = k % routes;
        auto obj = server.store().Get(routestatus::apiserver::RoutesInfo(),
                                      "ns-" + std::to_string(i % 100), "route-" + std::to_string(i));
        json route = json::parse(obj.value->json);
        route["status"]["ingress"][0]["conditions"][0]["message"] = "update " + std::to_string(k);
        auto r = client.Request("PUT",
                                "/apis/route.openshift.io/v1/namespaces/ns-" + std::to_string(i % 100) +
                                    "/routes/route-" + std::to_string(i) + "/status",
                                route.dump());
        (r.code == 200 ? done : failed)++;
      }
    });
  }
  for (auto& t : writers) t.join();
  double write_s = Seconds(t0);
  for (auto& t : readers) t.join();
  double fanout_s = Seconds(t0);
  int min_received = updates;
  for (auto& r : received) min_received = std::min(min_received, r.load());
  std::printf("status updates: %d ok, %d failed in %.2f s = %.0f updates/s over HTTP (%d clients)\n",
              done.load(), failed.load(), write_s, done / write_s, clients);
  std::printf("watch fan-out: %d watchers, each received >= %d of %d events; all delivered after %.2f s "
              "(%.0f events/s delivered in total)\n",
              watchers, min_received, updates, fanout_s, 1.0 * min_received * watchers / fanout_s);
  std::printf("final RSS %ld MB\n", RssMb());
  streams.clear();
  server.Stop();
  return failed == 0 && min_received == updates ? 0 : 1;
}
