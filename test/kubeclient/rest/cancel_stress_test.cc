// Cancelling or abandoning a request at any moment never crashes and never
// leaks (run under the sanitizers by `make test`). A replica crashed with
// SIGSEGV in boost::asio's reactor when a watch was cancelled while
// cpprestsdk's TLS read was in flight on its I/O thread; watches now run
// on sockets the client owns and other requests are abandoned, not
// cancelled. Each test drives thousands of streams that the server is
// writing to as fast as they read, and ends them at random moments: by
// Cancel() from another thread, by destroying them mid-read, and by the
// client's Shutdown() while a watch opens or a list downloads.
#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "apiserver/self_signed_cert.h"
#include "kubeclient/rest/rest_kube_client.h"
#include "test/kubeclient/rest/stream_server.h"

namespace routestatus::kubeclient::rest {
namespace {

using std::chrono::milliseconds;
using std::chrono::microseconds;

// Streams per test; ROUTESTATUS_CANCEL_STRESS overrides (e.g. to soak).
// The defaults (2,600 TLS + 9,000 plain, one in eight destroyed instead of
// cancelled) cancel over 10,000 streams mid-read.
int StreamCount(int fallback) {
  const char* v = std::getenv("ROUTESTATUS_CANCEL_STRESS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

int OpenFds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
}

std::unique_ptr<KubeClient> NewClient(const std::string& url, const std::string& ca) {
  RestConfig cfg;
  cfg.server = url;
  cfg.token = "t";
  cfg.origin = "stress";
  cfg.ca_data = ca;
  RestOptions opts;
  opts.qps = 0;  // no rate limit
  static RealClock clock;
  auto c = NewRestKubeClient(cfg, clock, opts);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// Calls Cancel() on streams at their due time, from its own thread.
class Canceller {
 public:
  Canceller() : thread_([this] { Run(); }) {}
  ~Canceller() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void CancelAt(std::chrono::steady_clock::time_point due, std::shared_ptr<WatchStream> s) {
    {
      std::lock_guard<std::mutex> l(mu_);
      due_.push({due, std::move(s)});
    }
    cv_.notify_all();
  }

 private:
  struct Item {
    std::chrono::steady_clock::time_point due;
    std::shared_ptr<WatchStream> stream;
    bool operator>(const Item& o) const { return due > o.due; }
  };
  void Run() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      if (due_.empty()) {
        if (stop_) return;
        cv_.wait(l);
        continue;
      }
      auto due = due_.top().due;
      if (std::chrono::steady_clock::now() < due) {
        cv_.wait_until(l, due);
        continue;
      }
      Item item = due_.top();
      due_.pop();
      l.unlock();
      item.stream->Cancel();
      item.stream.reset();  // may destroy it here, on this thread
      l.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> due_;
  bool stop_ = false;
  std::thread thread_;
};

struct Tally {
  std::mutex mu;
  int cancelled = 0, destroyed = 0, other = 0;
};

// One worker's share: opens watches and ends each at a random moment.
void Churn(KubeClient& client, Canceller& canceller, int count, uint32_t seed, Tally* tally) {
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    WatchOptions wo;
    wo.resource_version = "1";
    auto opened = client.Watch(RoutesResource(), "", wo);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::shared_ptr<WatchStream> stream = std::move(opened).value();
    if (rng() % 8 == 0) {
      // Abandoned: read a few events, then destroy it mid-stream.
      const int events = static_cast<int>(rng() % 20);
      for (int e = 0; e < events; ++e) ASSERT_TRUE(stream->Next().ok());
      stream.reset();
      std::lock_guard<std::mutex> l(tally->mu);
      ++tally->destroyed;
      continue;
    }
    // Cancelled from another thread while this one reads (the server keeps
    // writing: the cancel lands mid-read, mid-TLS-record, anywhere).
    canceller.CancelAt(std::chrono::steady_clock::now() + microseconds(rng() % 1500), stream);
    Status end;
    for (;;) {
      auto e = stream->Next();
      if (!e.ok()) {
        end = e.status();
        break;
      }
    }
    std::lock_guard<std::mutex> l(tally->mu);
    if (end.code() == StatusCode::kCancelled) {
      ++tally->cancelled;
    } else {
      ++tally->other;
      ADD_FAILURE() << "a cancelled watch ended " << end.ToString();
    }
  }
}

void RunStress(const std::string& url, const std::string& ca, int total) {
  signal(SIGPIPE, SIG_IGN);
  const int fds_before = OpenFds();
  Tally tally;
  {
    auto client = NewClient(url, ca);
    ASSERT_NE(client, nullptr);
    Canceller canceller;
    constexpr int kWorkers = 4;
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        Churn(*client, canceller, total / kWorkers, 1000 + static_cast<uint32_t>(w), &tally);
      });
    }
    for (auto& t : workers) t.join();
  }
  std::cout << "streams: " << tally.cancelled << " cancelled mid-read, " << tally.destroyed
            << " destroyed mid-read, " << tally.other << " other\n";
  EXPECT_EQ(tally.cancelled + tally.destroyed, total - total % 4);
  EXPECT_EQ(tally.other, 0);
  EXPECT_LE(OpenFds(), fds_before + 8) << "descriptors leaked";
}

TEST(CancelStressTest, TlsWatchesCancelledAtRandomMoments) {
  auto cert = apiserver::GenerateSelfSignedCert();
  ASSERT_TRUE(cert.ok());
  StreamServer server(cert->cert_pem, cert->key_pem);
  // Why fewer than plain: each TLS stream costs a handshake (~9 ms at -O2).
  RunStress(server.url(), cert->cert_pem, StreamCount(2600));
  EXPECT_TRUE(server.WaitAllClosed(30)) << server.open_connections() << " connections still open";
}

TEST(CancelStressTest, PlainWatchesCancelledAtRandomMoments) {
  StreamServer server;
  RunStress(server.url(), "", StreamCount(9000));
  EXPECT_TRUE(server.WaitAllClosed(30)) << server.open_connections() << " connections still open";
}

// The client's Shutdown() at a random moment of a watch's opening (TCP
// connect, TLS handshake, waiting for the head, reading) or of a list's
// download: every call returns promptly, and what was abandoned finishes
// on its own.
TEST(CancelStressTest, ShutdownWhileWatchesOpenAndListsDownload) {
  signal(SIGPIPE, SIG_IGN);
  auto cert = apiserver::GenerateSelfSignedCert();
  ASSERT_TRUE(cert.ok());
  StreamServer server(cert->cert_pem, cert->key_pem);
  std::mt19937 rng(7);
  const int rounds = 300;
  for (int i = 0; i < rounds; ++i) {
    auto client = NewClient(server.url(), cert->cert_pem);
    ASSERT_NE(client, nullptr);
    const int kind = i % 3;  // a list (cpprest), a list item by item (owned socket), a watch
    std::thread caller([&client, kind] {
      auto start = std::chrono::steady_clock::now();
      if (kind == 0) {
        (void)client->List(RoutesResource(), "", {});
      } else if (kind == 1) {
        (void)client->ListEach(RoutesResource(), "", {}, [](std::string_view) {});
      } else {
        auto w = client->Watch(RoutesResource(), "", {});
        if (w.ok()) {
          while ((*w)->Next().ok()) {
          }
        }
      }
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    });
    std::this_thread::sleep_for(microseconds(rng() % 20000));
    client->Shutdown();
    caller.join();
  }
  EXPECT_TRUE(server.WaitAllClosed(30)) << server.open_connections() << " connections still open";
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
