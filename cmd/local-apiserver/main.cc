// local-apiserver: a standalone, Kubernetes-compatible API server for routes
// and namespaces (see apiserver/server.h). Prints its URL on stdout as one
// line once serving; exits 0 on SIGTERM/SIGINT, 2 on bad flags. Faults,
// restarts included, are injected through its admin endpoints (--help).

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <glog/logging.h>

#include "apiserver/server.h"

namespace {

void Usage() {
  std::cerr << "usage: local-apiserver [--listen HOST:PORT] [--kubeconfig-out PATH] [--token T]\n"
               "                       [--tls] [--tls-host H[,H...]] [--watch-history N]\n"
               "                       [--bookmark-interval MS] [--progress-notify-interval MS]\n"
               "                       [--always-bookmark]\n"
               "                       [--threads N] [--watch-list=false|gate-off|no-progress-notify]\n"
               "                       [--initial-events-blueprint] [--watch-cache=false]\n"
               "                       [--etcd-endpoint http://HOST:PORT]\n"
               "  --listen             address to serve on (default 127.0.0.1:0, 0 = pick a port)\n"
               "  --kubeconfig-out     write a kubeconfig for kubectl/clients to PATH\n"
               "  --token              require this bearer token\n"
               "  --tls                serve HTTPS with a generated self-signed certificate\n"
               "                       (for 127.0.0.1, ::1 and localhost)\n"
               "  --tls-host           more IPs or DNS names for that certificate, comma-\n"
               "                       separated, repeatable (what a client in a container\n"
               "                       dials: KUBERNETES_SERVICE_HOST)\n"
               "  --watch-history      events kept for watch resume (default 10000)\n"
               "  --bookmark-interval  milliseconds between watch bookmarks (default 60000, as\n"
               "                       kube-apiserver's watch cache; also 2 s before a timeout).\n"
               "                       As kube's, a bookmark is sent only when its resource\n"
               "                       changed (or a progress notification came) since the\n"
               "                       version the watch began at: quiet watches hear nothing\n"
               "  --progress-notify-interval  milliseconds between simulated etcd progress\n"
               "                       notifications, which move every quiet resource's\n"
               "                       bookmark version to the current revision (default\n"
               "                       600000, etcd's default; 0 = never)\n"
               "  --always-bookmark    the old, kinder bookmarks no real server sends: every\n"
               "                       interval, at the current revision, to every watch\n"
               "  --watch-list=false   answer watches as kube 1.26 (resourceVersionMatch is 422,\n"
               "                       no sendInitialEvents); default: as kube 1.27+ with WatchList\n"
               "  --watch-list=gate-off  as kube 1.33 (its WatchList gate off by default): a\n"
               "                       watch list is 422 \"sendInitialEvents is forbidden ...\"\n"
               "  --watch-list=no-progress-notify  as kube 1.32 over an etcd without\n"
               "                       RequestWatchProgress: a watch list is 200, then one ERROR\n"
               "                       event (500 InternalError), then the stream ends\n"
               "  --initial-events-blueprint  the end bookmark of a watch list also carries\n"
               "                       kubernetes.io/initial-events-list-blueprint, as 1.32's\n"
               "  --watch-cache=false  every list reads storage, page by page (kube-apiserver's\n"
               "                       --watch-cache=false); default: resourceVersion 0 and a\n"
               "                       version without a limit come from the watch cache\n"
               "  --etcd-endpoint      a real etcd (3.4+, started with --max-txn-ops >= 1000) as\n"
               "                       storage: every write also goes to etcd under kube's\n"
               "                       keys (/registry/route.openshift.io/routes/NS/NAME), and\n"
               "                       lists served from storage are etcd range reads, page\n"
               "                       by page, as kube-apiserver's; it owns etcd's /registry/\n"
               "                       (default: none, storage reads read memory)\n"
               "Fault injection (admin endpoints, token-protected like the API):\n"
               "  POST /admin/faults {FaultRule}   DELETE /admin/faults   POST /admin/compact\n"
               "  POST /admin/close-watches   POST /admin/drop-connections\n"
               "  POST /admin/restart {\"downMs\": N, \"startupMs\": M}: a kube-apiserver restart:\n"
               "    refuse connections for N ms, then serve the same objects with a fresh\n"
               "    watch cache (watches from older resourceVersions get 410); for M ms\n"
               "    after that, starting: custom resources 503 \"server is starting\"\n"
               "    (Retry-After 10) and /readyz 500, as kube-apiserver before its CRD\n"
               "    informer has synced\n";
}

bool ParseNumber(const std::string& text, long long* out) {
  char* end = nullptr;
  *out = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && end != nullptr && *end == '\0' && *out >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  routestatus::apiserver::ServerOptions options;
  std::string kubeconfig_out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    size_t eq = arg.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto next = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    long long n = 0;
    if (arg == "--help" || arg == "-h") {
      Usage();
      return 0;
    } else if (arg == "--tls") {
      options.tls = !has_value || value == "true" || value == "1";
    } else if (arg == "--watch-list") {
      using Answer = routestatus::apiserver::ServerOptions::WatchListAnswer;
      if (has_value && value == "gate-off") {
        options.watch_list_answer = Answer::kGateOff;
      } else if (has_value && value == "no-progress-notify") {
        options.watch_list_answer = Answer::kNoProgressNotify;
      } else if (!has_value || value == "true" || value == "1" || value == "false" || value == "0") {
        options.watch_list = !has_value || value == "true" || value == "1";
      } else {
        std::cerr << "local-apiserver: --watch-list takes true, false, gate-off or "
                     "no-progress-notify, not \"" << value << "\"\n";
        return 2;
      }
    } else if (arg == "--initial-events-blueprint") {
      options.initial_events_blueprint = !has_value || value == "true" || value == "1";
    } else if (arg == "--watch-cache") {
      options.watch_cache = !has_value || value == "true" || value == "1";
    } else if (arg == "--tls-host" && next() && !value.empty()) {
      for (size_t start = 0; start <= value.size();) {
        size_t comma = std::min(value.find(',', start), value.size());
        options.tls_hosts.push_back(value.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg == "--etcd-endpoint" && next()) {
      options.etcd_endpoint = value;
    } else if (arg == "--listen" && next()) {
      options.listen = value;
    } else if (arg == "--kubeconfig-out" && next()) {
      kubeconfig_out = value;
    } else if (arg == "--token" && next()) {
      options.token = value;
    } else if (arg == "--watch-history" && next() && ParseNumber(value, &n) && n > 0) {
      options.watch_history = static_cast<size_t>(n);
    } else if (arg == "--bookmark-interval" && next() && ParseNumber(value, &n) && n > 0) {
      options.bookmark_interval = std::chrono::milliseconds(n);
    } else if (arg == "--progress-notify-interval" && next() && ParseNumber(value, &n)) {
      options.progress_notify_interval = std::chrono::milliseconds(n);
    } else if (arg == "--always-bookmark") {
      options.legacy_bookmarks = !has_value || value == "true" || value == "1";
    } else if (arg == "--threads" && next() && ParseNumber(value, &n) && n > 0) {
      options.threads = static_cast<int>(n);
    } else {
      std::cerr << "local-apiserver: bad or incomplete flag: " << argv[i] << "\n";
      Usage();
      return 2;
    }
  }
  if (options.listen.find(':') == std::string::npos) {
    std::cerr << "local-apiserver: --listen must be HOST:PORT, got " << options.listen << "\n";
    return 2;
  }

  // Why: block the signals in every thread (civetweb's included) and take
  // them synchronously here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  routestatus::apiserver::Server server(options);
  routestatus::Status started = server.Start();
  if (!started.ok()) {
    std::cerr << "local-apiserver: " << started.ToString() << "\n";
    return 1;
  }
  if (!kubeconfig_out.empty()) {
    routestatus::Status written = server.WriteKubeconfig(kubeconfig_out);
    if (!written.ok()) {
      std::cerr << "local-apiserver: " << written.ToString() << "\n";
      return 1;
    }
  }
  std::cout << server.base_url() << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  LOG(INFO) << "local-apiserver: signal " << sig << ", shutting down";
  server.Stop();
  return 0;
}
