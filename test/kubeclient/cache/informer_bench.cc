// Benchmark of the route informer (not run by ctest):
//  1. initial paginated list of N routes (pages of 500, ~1.5 KB each)
//     decoded into the cache: wall and CPU seconds, peak RSS (VmHWM);
//  2. watch decoding: events/s on one thread (DecodeWatchEventText + text
//     decode + cache update + handler, as with the REST client's NextRaw).
// Pages are generated on the fly by an in-memory fake client as JSON text
// and split with RawListPageFromText (what the REST client's ListRaw does),
// or with "dom" parsed into trees by List() (what fakes without ListRaw
// give). Usage: informer_bench [routes] [watch_events] [dom]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <malloc.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "kubeclient/cache/informer.h"

namespace routestatus::kubeclient::cache {
namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

long VmKb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::string(field).size());
  }
  return -1;
}

// About 1.4 KB of route JSON, shaped like a real one (labels, annotations,
// TLS, two routers' status entries).
void AppendRoute(std::string* out, int i, int64_t rv) {
  char buf[2048];
  int n = std::snprintf(
      buf, sizeof(buf),
      R"({"apiVersion":"route.openshift.io/v1","kind":"Route","metadata":{"name":"route-%d",)"
      R"("namespace":"ns-%d","uid":"9f1c2a7e-%08d-4b1d-9e0a-5c3b7d2f%04d","resourceVersion":"%lld",)"
      R"("generation":3,"creationTimestamp":"2026-11-%02dT10:%02d:%02dZ",)"
      R"("labels":{"app":"shop-%d","tier":"frontend","shard":"s%d","team":"payments"},)"
      R"("annotations":{"haproxy.router.openshift.io/timeout":"30s","openshift.io/host.generated":"false",)"
      R"("kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"route.openshift.io/v1\",\"kind\":\"Route\",\"metadata\":{\"name\":\"route-%d\"},\"spec\":{\"host\":\"route-%d.apps.example.com\"}}"},)"
      R"("finalizers":[]},)"
      R"("spec":{"host":"route-%d.apps.example.com","path":"/api/v%d","to":{"kind":"Service","name":"svc-%d","weight":100},)"
      R"("port":{"targetPort":"https"},"tls":{"termination":"edge","insecureEdgeTerminationPolicy":"Redirect"},)"
      R"("wildcardPolicy":"None"},"status":{"ingress":[)"
      R"({"routerName":"default","host":"route-%d.apps.example.com","routerCanonicalHostname":"router-default.apps.example.com",)"
      R"("wildcardPolicy":"None","conditions":[{"type":"Admitted","status":"True","lastTransitionTime":"2026-11-29T10:00:00Z"}]},)"
      R"({"routerName":"internal","host":"route-%d.apps.example.com","routerCanonicalHostname":"router-internal.apps.example.com",)"
      R"("wildcardPolicy":"None","conditions":[{"type":"Admitted","status":"False","reason":"HostAlreadyClaimed",)"
      R"("message":"route ns-1/route-1 already exposes route-%d.apps.example.com and is older","lastTransitionTime":"2026-11-29T10:00:00Z"}]}]}})",
      i, i % 500, i, i % 10000, static_cast<long long>(rv), 1 + i % 28, i % 60, i % 60, i % 97,
      i % 8, i, i, i, i % 5, i, i, i, i);
  out->append(buf, n);
}

class PageClient final : public KubeClient {
 public:
  explicit PageClient(int routes) : routes_(routes) {}
  double generate_seconds = 0;
  double parse_seconds = 0;
  size_t bytes = 0;

  // With raw_pages, ListRaw() splits the page text as the REST client does;
  // else it falls back to the default (List() + dump).
  bool raw_pages = true;

  std::string PageText(const ListOptions& o, std::string* next) {
    int start = o.continue_token.empty() ? 0 : std::atoi(o.continue_token.c_str());
    int end = std::min<int>(routes_, start + static_cast<int>(o.limit));
    auto t0 = std::chrono::steady_clock::now();
    std::string text = R"({"kind":"RouteList","apiVersion":"route.openshift.io/v1","metadata":{"resourceVersion":"1000000"},"items":[)";
    text.reserve(static_cast<size_t>(end - start) * 1600 + 64);
    for (int i = start; i < end; ++i) {
      if (i > start) text.push_back(',');
      AppendRoute(&text, i, 1000 + i);
    }
    text += "]}";
    bytes += text.size();
    generate_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    next->clear();
    if (end < routes_) *next = std::to_string(end);
    return text;
  }

  StatusOr<RawListPage> ListRaw(const ResourceRef& r, const std::string& ns,
                                const ListOptions& o) override {
    if (!raw_pages) return KubeClient::ListRaw(r, ns, o);
    std::string next;
    std::string text = PageText(o, &next);
    auto t1 = std::chrono::steady_clock::now();
    auto page = RawListPageFromText(std::move(text));
    parse_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    if (page.ok()) page->continue_token = next;
    return page;
  }

  StatusOr<ListPage> List(const ResourceRef&, const std::string&, const ListOptions& o) override {
    std::string next;
    std::string text = PageText(o, &next);
    auto t1 = std::chrono::steady_clock::now();
    nlohmann::json doc = nlohmann::json::parse(text);
    parse_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    ListPage page;
    page.resource_version = "1000000";
    page.items = std::move(doc["items"].get_ref<nlohmann::json::array_t&>());
    page.continue_token = next;
    return page;
  }
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef&, const std::string&,
                                               const WatchOptions&) override {
    return Status(StatusCode::kUnavailable, "bench");
  }
  StatusOr<nlohmann::json> Get(const ResourceRef&, const std::string&, const std::string&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<nlohmann::json> Create(const ResourceRef&, const std::string&, const nlohmann::json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<nlohmann::json> Update(const ResourceRef&, const nlohmann::json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<nlohmann::json> UpdateStatus(const ResourceRef&, const nlohmann::json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<nlohmann::json> MergePatchStatus(const ResourceRef&, const std::string&,
                                            const std::string&, const nlohmann::json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  Status Delete(const ResourceRef&, const std::string&, const std::string&) override {
    return Status(StatusCode::kInternal, "n/a");
  }

 private:
  int routes_;
};

// Replays watch lines through DecodeWatchEvent(Text), as the REST stream does.
class LineStream final : public WatchStream {
 public:
  explicit LineStream(const std::vector<std::string>* lines) : lines_(lines) {}
  StatusOr<WatchEvent> Next() override {
    if (next_ >= lines_->size()) return Status(StatusCode::kClosed, "done");
    return DecodeWatchEvent((*lines_)[next_++]);
  }
  // As the REST stream: objects of ADDED/MODIFIED/DELETED stay text.
  StatusOr<WatchEvent> NextRaw() override {
    if (next_ >= lines_->size()) return Status(StatusCode::kClosed, "done");
    return DecodeWatchEventText((*lines_)[next_++]);
  }
  void Cancel() override {}

 private:
  const std::vector<std::string>* lines_;
  size_t next_ = 0;
};

class WatchClient final : public KubeClient {
 public:
  explicit WatchClient(PageClient* pages, const std::vector<std::string>* lines)
      : pages_(pages), lines_(lines) {}
  StatusOr<ListPage> List(const ResourceRef& r, const std::string& ns, const ListOptions& o) override {
    return pages_->List(r, ns, o);
  }
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef&, const std::string&,
                                               const WatchOptions&) override {
    return std::unique_ptr<WatchStream>(std::make_unique<LineStream>(lines_));
  }
  StatusOr<nlohmann::json> Get(const ResourceRef& r, const std::string& a, const std::string& b) override {
    return pages_->Get(r, a, b);
  }
  StatusOr<nlohmann::json> Create(const ResourceRef& r, const std::string& a, const nlohmann::json& b) override {
    return pages_->Create(r, a, b);
  }
  StatusOr<nlohmann::json> Update(const ResourceRef& r, const nlohmann::json& o) override {
    return pages_->Update(r, o);
  }
  StatusOr<nlohmann::json> UpdateStatus(const ResourceRef& r, const nlohmann::json& o) override {
    return pages_->UpdateStatus(r, o);
  }
  StatusOr<nlohmann::json> MergePatchStatus(const ResourceRef& r, const std::string& ns,
                                            const std::string& n,
                                            const nlohmann::json& p) override {
    return pages_->MergePatchStatus(r, ns, n, p);
  }
  Status Delete(const ResourceRef& r, const std::string& a, const std::string& b) override {
    return pages_->Delete(r, a, b);
  }

 private:
  PageClient* pages_;
  const std::vector<std::string>* lines_;
};

class CountingHandler final : public EventHandler<Route> {
 public:
  void OnAdd(const Ptr&, bool) override { ++adds; }
  void OnUpdate(const Ptr&, const Ptr&) override { ++updates; }
  void OnDelete(const Ptr&) override { ++deletes; }
  uint64_t adds = 0, updates = 0, deletes = 0;
};

int Main(int argc, char** argv) {
  int routes = argc > 1 ? std::atoi(argv[1]) : 100000;
  int events = argc > 2 ? std::atoi(argv[2]) : 50000;
  // "dom": pages parsed into a tree by List() (the KubeClient default
  // ListRaw); else split as text like the REST client.
  bool dom = argc > 3 && std::string(argv[3]) == "dom";
  RealClock clock;
  PageClient pages(routes);
  pages.raw_pages = !dom;
  InformerOptions options;
  options.name = "bench";
  CountingHandler handler;
  {
    RouteInformer inf(pages, clock, options);
    inf.AddIndex("host", [](const Route& r) { return std::vector<std::string>{r.spec.host}; });
    inf.AddEventHandler(&handler);
    long rss_before = VmKb("VmRSS:");
    double c0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    Status s = inf.reflector().ListAndReplace();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s.ok() || inf.List().size() != static_cast<size_t>(routes)) {
      std::fprintf(stderr, "list failed: %s (%zu cached)\n", s.ToString().c_str(), inf.List().size());
      return 1;
    }
    std::printf("initial list: %d routes, %.1f MB of JSON in pages of 500\n", routes,
                pages.bytes / 1e6);
    std::printf("  total %.3f s (of which the fake's page text generation %.3f s; "
                "decode+cache %.3f s), %.1f routes/ms\n",
                secs, pages.generate_seconds, secs - pages.generate_seconds, routes / secs / 1000);
    std::printf("  CPU time %.3f s (the machine is shared: wall time varies with load)\n",
                CpuSeconds() - c0);
    struct mallinfo2 mi = mallinfo2();
    std::printf("  heap in use after the list %.1f MB (sizeof(Route) %zu B, %.0f B/route in use)\n",
                mi.uordblks / 1e6, sizeof(Route), static_cast<double>(mi.uordblks) / routes);
    std::printf("  of which %s of the pages %.3f s\n",
                dom ? "nlohmann::json::parse" : "RawListPageFromText", pages.parse_seconds);
    {
      // The decoders alone on one page's items, for the breakdown.
      ListOptions lo;
      lo.limit = 500;
      std::string next;
      auto page = RawListPageFromText(pages.PageText(lo, &next));
      auto t2 = std::chrono::steady_clock::now();
      size_t raw = 0;
      for (size_t i = 0; i < page->size(); ++i) raw += RouteFromText(page->Item(i))->ingress_json.size();
      double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
      std::vector<nlohmann::json> trees;
      for (size_t i = 0; i < page->size(); ++i) trees.push_back(nlohmann::json::parse(page->Item(i)));
      auto t3 = std::chrono::steady_clock::now();
      for (const auto& item : trees) (void)RouteFromJson(item);
      double dj = std::chrono::duration<double>(std::chrono::steady_clock::now() - t3).count();
      std::printf("  RouteFromText alone: %.1f us/route (x%d routes = %.3f s), ingress_json %.0f B/route; "
                  "RouteFromJson (tree given) %.1f us/route\n",
                  d / 500 * 1e6, routes, d / 500 * routes, raw / 500.0, dj / 500 * 1e6);
    }
    std::printf("  RSS before %.1f MB, peak RSS (VmHWM) %.1f MB, RSS after %.1f MB\n",
                rss_before / 1024.0, VmKb("VmHWM:") / 1024.0, VmKb("VmRSS:") / 1024.0);
  }
  // Watch: MODIFIED events for keys in the cache, rising resourceVersions.
  int cached = std::min(routes, 10000);
  PageClient small(cached);
  std::vector<std::string> lines;
  lines.reserve(events);
  for (int e = 0; e < events; ++e) {
    std::string line = R"({"type":"MODIFIED","object":)";
    AppendRoute(&line, e % cached, 2000000 + e);
    line += "}";
    lines.push_back(std::move(line));
  }
  WatchClient wc(&small, &lines);
  RouteInformer inf(wc, clock, options);
  inf.AddIndex("host", [](const Route& r) { return std::vector<std::string>{r.spec.host}; });
  CountingHandler wh;
  inf.AddEventHandler(&wh);
  if (!inf.reflector().ListAndReplace().ok()) return 1;
  double c1 = CpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  Status s = inf.reflector().WatchOnce();
  double cpu = CpuSeconds() - c1;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("watch: %d MODIFIED events (%s) over %d cached routes: %.3f s, %.0f events/s, "
              "%llu updates delivered, CPU %.3f s = %.0f events/CPU-s\n",
              events, s.ToString().c_str(), cached, secs, events / secs,
              static_cast<unsigned long long>(wh.updates), cpu, events / cpu);
  return wh.updates == static_cast<uint64_t>(events) ? 0 : 1;
}

}  // namespace
}  // namespace routestatus::kubeclient::cache

int main(int argc, char** argv) { return routestatus::kubeclient::cache::Main(argc, argv); }
