#include "e2e/harness/cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <glog/logging.h>

#include "e2e/harness/raw_get.h"
#include "kubeclient/rest/kube_config.h"
#include "kubeclient/rest/rest_kube_client.h"

#ifndef E2E_DEFAULT_CONTROLLER_BINARY
#define E2E_DEFAULT_CONTROLLER_BINARY "route-status-controller"
#endif
#ifndef E2E_DEFAULT_APISERVER_BINARY
#define E2E_DEFAULT_APISERVER_BINARY "local-apiserver"
#endif

namespace routestatus::e2e {

using nlohmann::json;

namespace {

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string RandomSuffix() {
  std::random_device rd;
  std::mt19937 rng(rd());
  const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s += alphabet[rng() % 36];
  return s;
}

std::string Label(const PromSample& s, const char* key) {
  auto it = s.labels.find(key);
  return it == s.labels.end() ? std::string() : it->second;
}

// kube-apiserver labels writes by HTTP method (APPLY for server-side apply).
bool IsWriteVerb(const std::string& v) {
  return v == "POST" || v == "PUT" || v == "PATCH" || v == "DELETE" || v == "APPLY";
}

}  // namespace

ServerWrites ServerWritesFromSamples(const std::vector<PromSample>& samples) {
  ServerWrites w;
  for (const PromSample& s : samples) {
    if (s.name != "apiserver_request_total") continue;
    const std::string verb = Label(s, "verb");
    if (!IsWriteVerb(verb)) continue;
    if (Label(s, "resource") == "routes" && Label(s, "subresource") == "status" &&
        (verb == "PUT" || verb == "PATCH")) {
      const std::string code = Label(s, "code");
      if (!code.empty() && code[0] == '2') {
        w.status_ok += s.value;
      } else if (code == "409") {
        w.status_conflict += s.value;
      } else {
        w.status_other += s.value;
      }
    } else {
      w.other_writes += s.value;
    }
  }
  return w;
}

LocalApiServer::LocalApiServer(const std::string& dir, const std::string& binary, bool tls,
                               const std::vector<std::string>& args)
    : kubeconfig_(dir + "/kubeconfig") {
  std::vector<std::string> argv = {binary.empty() ? E2eEnvFromProcess().apiserver_binary : binary,
                                   "--listen", "127.0.0.1:0", "--kubeconfig-out", kubeconfig_};
  if (tls) argv.push_back("--tls");
  argv.insert(argv.end(), args.begin(), args.end());
  process_ = std::make_unique<Subprocess>(DieWithParent(argv), dir + "/local-apiserver.log");
}

bool LocalApiServer::WaitStarted(std::chrono::milliseconds timeout, std::string* error) {
  const std::string marker = "://127.0.0.1:";
  // Why the URL on a line of its own: local-apiserver prints it on stdout
  // after it wrote the kubeconfig; with --tls its log names the URL before
  // that ("serving https://..."), and a cluster that read the kubeconfig
  // then found no file (CI at 1e3cd08, PartitionTest).
  auto url_line = [](const std::string& log) -> size_t {
    if (log.compare(0, 4, "http") == 0) return 0;
    size_t at = log.find("\nhttp");
    return at == std::string::npos ? at : at + 1;
  };
  std::string log;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (url_line(log = process_->ReadLog()) == std::string::npos) {
    if (!process_->Running() || std::chrono::steady_clock::now() >= deadline) {
      *error = "local-apiserver did not print its URL (" +
               std::string(process_->Running() ? "timeout" : "it exited") + "); log " +
               process_->log_path() + ":\n" + log;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  size_t at = log.find(marker, url_line(log));
  if (at == std::string::npos) {
    *error = "local-apiserver printed no 127.0.0.1 URL; log " + process_->log_path();
    return false;
  }
  size_t scheme = log.rfind("http", at);
  url_ = log.substr(scheme, log.find_first_of("\r\n", at) - scheme);
  port_ = std::atoi(log.c_str() + at + marker.size());
  return port_ > 0;
}

ServerWrites LocalApiServer::Writes() const {
  bool ok = false;
  std::string body = HttpGetLocal(port_, "/metrics", &ok);
  return ServerWritesFromSamples(ParsePromText(body));
}

std::vector<std::string> DieWithParent(std::vector<std::string> argv) {
  static const bool has_setpriv = access("/usr/bin/setpriv", X_OK) == 0;
  if (!has_setpriv) return argv;
  std::vector<std::string> wrapped = {"/usr/bin/setpriv", "--pdeathsig", "KILL", "--"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

E2eEnv E2eEnvFromProcess() {
  E2eEnv env;
  env.kubeconfig = Env("E2E_KUBECONFIG");
  env.namespace_prefix = Env("E2E_NAMESPACE_PREFIX", "e2e-");
  env.controller_binary = Env("E2E_CONTROLLER_BINARY", E2E_DEFAULT_CONTROLLER_BINARY);
  env.apiserver_binary = Env("E2E_APISERVER_BINARY", E2E_DEFAULT_APISERVER_BINARY);
  env.kubectl = Env("E2E_KUBECTL", "kubectl");
  int quiet = std::atoi(Env("E2E_QUIET_SECONDS", "5").c_str());
  env.quiet_seconds = quiet > 0 ? quiet : 5;
  env.full = Env("E2E_FULL") == "1";
  env.keep_logs = Env("E2E_KEEP_LOGS") == "1";
  return env;
}

std::unique_ptr<TestCluster> TestCluster::Start(const E2eEnv& env, std::string* error) {
  std::unique_ptr<TestCluster> c(new TestCluster());
  c->env_ = env;
  c->temp_dir_ = MakeTempDir("routestatus-e2e");
  if (env.kubeconfig.empty()) {
    c->apiserver_ =
        std::make_unique<LocalApiServer>(c->temp_dir_, env.apiserver_binary, env.apiserver_tls,
                                         env.apiserver_args);
    if (!c->apiserver_->WaitStarted(std::chrono::seconds(20), error)) {
      *error = env.apiserver_binary + ": " + *error;
      return nullptr;
    }
    c->kubeconfig_ = c->apiserver_->kubeconfig();
    c->apiserver_port_ = c->apiserver_->port();
  } else {
    c->kubeconfig_ = env.kubeconfig;
  }
  auto config = kubeclient::rest::LoadKubeconfigFile(c->kubeconfig_);
  if (!config.ok()) {
    *error = config.status().ToString();
    return nullptr;
  }
  c->rest_config_ = *config;
  kubeclient::rest::RestOptions options;
  options.qps = 0;  // the test drives load itself
  options.max_retries = 10;
  options.user_agent = "routestatus-e2e";
  auto client = kubeclient::rest::NewRestKubeClient(*config, c->clock_, options);
  if (!client.ok()) {
    *error = client.status().ToString();
    return nullptr;
  }
  c->client_ = std::move(*client);
  return c;
}

TestCluster::~TestCluster() {
  if (!embedded()) {
    for (const std::string& ns : namespaces_) {
      Status s = client_->Delete(kubeclient::NamespacesResource(), "", ns);
      if (!s.ok()) LOG(WARNING) << "delete namespace " << ns << ": " << s.ToString();
    }
  }
  if (apiserver_) apiserver_->Stop(std::chrono::seconds(5));
  if (!env_.keep_logs && !temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  } else if (!temp_dir_.empty()) {
    LOG(INFO) << "e2e logs kept in " << temp_dir_;
  }
}

std::string TestCluster::CreateNamespace(const std::string& base,
                                         const std::map<std::string, std::string>& labels) {
  std::string name = embedded() ? base : env_.namespace_prefix + base + "-" + RandomSuffix();
  std::map<std::string, std::string> all_labels = labels;
  all_labels["routestatus-e2e"] = "true";
  auto r = client_->Create(kubeclient::NamespacesResource(), "", MakeNamespace(name, all_labels));
  if (!r.ok()) {
    LOG(ERROR) << "create namespace " << name << ": " << r.status().ToString();
    return "";
  }
  namespaces_.push_back(name);
  return name;
}

StatusOr<json> TestCluster::CreateRoute(const RouteShape& shape) {
  return client_->Create(kubeclient::RoutesResource(), shape.ns, MakeRoute(shape));
}

StatusOr<json> UpdateRouteWith(kubeclient::KubeClient& client, const std::string& ns,
                               const std::string& name, const std::function<void(json&)>& mutate,
                               bool status) {
  Status last(StatusCode::kInternal, "no attempt");
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto got = client.Get(kubeclient::RoutesResource(), ns, name);
    if (!got.ok()) return got.status();
    json obj = std::move(*got);
    mutate(obj);
    auto put = status ? client.UpdateStatus(kubeclient::RoutesResource(), obj)
                      : client.Update(kubeclient::RoutesResource(), obj);
    if (put.ok() || put.status().code() != StatusCode::kConflict) return put;
    last = put.status();
  }
  return last;
}

StatusOr<json> TestCluster::UpdateRoute(const std::string& ns, const std::string& name,
                                        const std::function<void(json&)>& mutate) {
  return UpdateRouteWith(*client_, ns, name, mutate, false);
}

StatusOr<json> TestCluster::UpdateRouteStatus(const std::string& ns, const std::string& name,
                                              const std::function<void(json&)>& mutate) {
  return UpdateRouteWith(*client_, ns, name, mutate, true);
}

Status TestCluster::DeleteRoute(const std::string& ns, const std::string& name) {
  return client_->Delete(kubeclient::RoutesResource(), ns, name);
}

StatusOr<std::vector<kubeclient::Route>> TestCluster::ListRoutes() {
  std::vector<kubeclient::Route> routes;
  for (const std::string& ns : namespaces_) {
    auto page = client_->List(kubeclient::RoutesResource(), ns, {});
    if (!page.ok()) return page.status();
    for (const json& item : page->items) {
      auto route = kubeclient::RouteFromJson(item);
      if (!route.ok()) return route.status();
      routes.push_back(std::move(*route));
    }
  }
  return routes;
}

StatusOr<std::vector<PromSample>> TestCluster::ScrapeServerMetrics() {
  std::string text;
  if (embedded()) {
    bool ok = false;
    int code = 0;
    text = HttpGetLocal(apiserver_port_, "/metrics", &ok, &code);
    if (!ok || code != 200) {
      return Status(StatusCode::kUnavailable, "GET /metrics of local-apiserver failed, code " +
                                                  std::to_string(code));
    }
  } else if (auto raw = RawGet(rest_config_, "/metrics"); raw.ok()) {
    text = std::move(*raw);
  } else {
    LOG_FIRST_N(WARNING, 1) << "e2e: GET /metrics with the kubeconfig's credentials failed ("
                            << raw.status().ToString() << "); trying kubectl";
    std::string cmd = env_.kubectl + " --kubeconfig '" + kubeconfig_ + "' get --raw /metrics";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return Status(StatusCode::kUnavailable, "popen " + cmd);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
    int rc = pclose(p);
    if (rc != 0) return Status(StatusCode::kUnavailable, cmd + " exited " + std::to_string(rc));
  }
  return ParsePromText(text);
}

WriteCounts TestCluster::StatusWrites() {
  StatusOr<std::vector<PromSample>> samples = Status(StatusCode::kInternal, "");
  for (int attempt = 0; attempt < 5; ++attempt) {
    samples = ScrapeServerMetrics();
    if (samples.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(samples.ok()) << samples.status().ToString();
  ServerWrites w = ServerWritesFromSamples(*samples);
  return {w.status_ok, w.status_conflict, w.status_other};
}

double TestCluster::StatusWriteVerbs() {
  auto samples = ScrapeServerMetrics();
  CHECK(samples.ok()) << samples.status().ToString();
  double total = 0;
  for (const PromSample& s : *samples) {
    if (s.name == "apiserver_request_total" && Label(s, "resource") == "routes" &&
        Label(s, "subresource") == "status" && IsWriteVerb(Label(s, "verb"))) {
      total += s.value;
    }
  }
  return total;
}

Status TestCluster::AdminPost(const std::string& path, const std::string& body,
                              const std::string& method) {
  if (!embedded()) {
    return Status(StatusCode::kInvalid, "fault injection needs the embedded API server");
  }
  std::string reply;
  int code = HttpRequestLocal(method, apiserver_port_, path, body, &reply);
  if (code != 200) {
    return Status(StatusCode::kUnavailable,
                  method + " " + path + " -> " + std::to_string(code) + " " + reply);
  }
  return Status::Ok();
}

Status TestCluster::AddFault(const json& rule) { return AdminPost("/admin/faults", rule.dump()); }
Status TestCluster::ClearFaults() { return AdminPost("/admin/faults", "", "DELETE"); }
Status TestCluster::CloseWatches() { return AdminPost("/admin/close-watches", ""); }
Status TestCluster::Compact() { return AdminPost("/admin/compact", ""); }
Status TestCluster::DropConnections() { return AdminPost("/admin/drop-connections", ""); }

StatusOr<std::chrono::steady_clock::time_point> TestCluster::RestartServer(
    std::chrono::milliseconds down, std::chrono::milliseconds startup) {
  using std::chrono::milliseconds;
  Status posted = AdminPost("/admin/restart",
                            json{{"downMs", down.count()}, {"startupMs", startup.count()}}.dump());
  if (!posted.ok()) return posted;
  auto answers = [this] {
    int code = 0;
    bool ok = false;
    HttpGetLocal(apiserver_port_, "/readyz", &ok, &code);
    return ok && code == 200;
  };
  // Why: the server goes down on its own thread just after answering.
  if (!WaitFor([&] { return !answers(); }, milliseconds(5000), milliseconds(5))) {
    return Status(StatusCode::kInternal, "the API server did not go down for the restart");
  }
  if (!WaitFor(answers, down + startup + milliseconds(30000), milliseconds(10))) {
    return Status(StatusCode::kUnavailable, "the API server did not come back after the restart");
  }
  return std::chrono::steady_clock::now();
}

std::string TestCluster::ServerLog() const {
  return apiserver_ ? apiserver_->ReadLog() : std::string("(not embedded: no server log)");
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout,
             std::chrono::milliseconds poll) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
}

bool IsAdmittedBy(const kubeclient::Route& route, const std::string& router_name) {
  const auto entry = route.FindIngress(router_name);
  if (!entry) return false;
  for (const auto& c : entry->conditions) {
    if (c.type == "Admitted") return c.status == "True";
  }
  return false;
}

bool WaitForRoutes(TestCluster& cluster, const std::function<bool(const kubeclient::Route&)>& check,
                   std::chrono::milliseconds timeout, int expected_routes, std::string* why) {
  std::string last_why;
  bool ok = WaitFor(
      [&] {
        auto routes = cluster.ListRoutes();
        if (!routes.ok()) {
          last_why = "list: " + routes.status().ToString();
          return false;
        }
        if (expected_routes >= 0 && static_cast<int>(routes->size()) != expected_routes) {
          last_why = "have " + std::to_string(routes->size()) + " routes, want " +
                     std::to_string(expected_routes);
          return false;
        }
        std::ostringstream bad;
        int failing = 0;
        for (const auto& r : *routes) {
          if (check(r)) continue;
          if (++failing <= 3) {
            bad << "\n  " << r.Key() << ": status.ingress "
                << (r.ingress_json.empty() ? std::string("absent") : r.ingress_json.str());
          }
        }
        if (failing == 0) return true;
        last_why = std::to_string(failing) + " route(s) not as expected, e.g." + bad.str();
        return false;
      },
      timeout, std::chrono::milliseconds(250));
  if (!ok && why != nullptr) *why = last_why;
  return ok;
}

bool WaitForWritesToSettle(TestCluster& cluster, std::chrono::milliseconds settle,
                           std::chrono::milliseconds timeout) {
  double last = cluster.StatusWrites().total();
  auto last_change = std::chrono::steady_clock::now();
  return WaitFor(
      [&] {
        double now_total = cluster.StatusWrites().total();
        auto now = std::chrono::steady_clock::now();
        if (now_total != last) {
          last = now_total;
          last_change = now;
        }
        return now - last_change >= settle;
      },
      timeout, std::chrono::milliseconds(200));
}

double WritesDuring(TestCluster& cluster, std::chrono::milliseconds period) {
  double before = cluster.StatusWriteVerbs();
  std::this_thread::sleep_for(period);
  return cluster.StatusWriteVerbs() - before;
}

}  // namespace routestatus::e2e
