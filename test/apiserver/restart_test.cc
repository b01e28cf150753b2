// The restart fault (Server::Restart, POST /admin/restart): connections
// refused while down, then the same objects with a fresh watch history, as
// from a restarted kube-apiserver (its watch cache starts at the current
// revision: "too old resource version" for any earlier one; lists and
// continue tokens still served, etcd kept them).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <thread>
#include <vector>

#include "apiserver/object_store.h"
#include "apiserver/port_reservation.h"
#include "test/apiserver/test_server.h"
#include "test/testing/fake_clock.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// The first non-bookmark event of a watch, null when none arrives in time.
json FirstEvent(LineStream& s) {
  while (true) {
    auto line = s.NextLine(milliseconds(5000));
    if (!line) return nullptr;
    json e = json::parse(*line, nullptr, false);
    if (e.is_discarded() || e["type"] != "BOOKMARK") return e;
  }
}

bool WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return done();
}

TEST(ObjectStoreRestartTest, OlderVersionsGetTooOldButListsAndContinuesWork) {
  ::routestatus::testing::FakeClock clock;
  ObjectStore store(clock, ObjectStore::Options{100, 100});
  ASSERT_TRUE(store.Create(NamespacesInfo(), "", {{"metadata", {{"name", "ns"}}}}).ok());
  for (const char* name : {"a", "b"}) {
    // Why: the store checks routes against deploy/crd's schema (spec.to required).
    json route = {{"metadata", {{"name", name}}},
                  {"spec", {{"host", std::string(name) + ".x"},
                            {"to", {{"kind", "Service"}, {"name", "svc"}}}}}};
    ASSERT_TRUE(store.Create(RoutesInfo(), "ns", route).ok());
  }
  auto page = store.List(RoutesInfo(), {}, 1, "");
  ASSERT_TRUE(page.ok());
  const uint64_t before = page.value.rv;
  ASSERT_FALSE(page.value.continue_token.empty());

  const uint64_t floor = store.RestartWatchCache();
  EXPECT_EQ(floor, before + 1) << "the restarted server's own writes move the revision on";
  EXPECT_EQ(store.CurrentRv(), floor);
  auto old_watch = store.Watch(RoutesInfo(), {}, before);
  ASSERT_FALSE(old_watch.ok());
  EXPECT_EQ(old_watch.error->code, 410);
  EXPECT_EQ(old_watch.error->reason, "Expired");
  EXPECT_EQ(old_watch.error->message, "too old resource version: " + std::to_string(before) +
                                          " (" + std::to_string(floor) + ")");
  auto rest = store.List(RoutesInfo(), {}, 0, page.value.continue_token);
  ASSERT_TRUE(rest.ok()) << "a continue token from before the restart still works";
  ASSERT_EQ(rest.value.items.size(), 1u);
  EXPECT_EQ(rest.value.items[0]->name, "b");
  auto relisted = store.List(RoutesInfo(), {}, 0, "");
  ASSERT_TRUE(relisted.ok());
  EXPECT_EQ(relisted.value.rv, floor);
  EXPECT_EQ(relisted.value.items.size(), 2u);
  EXPECT_TRUE(store.Watch(RoutesInfo(), {}, floor).ok()) << "a watch from the new list works";
  EXPECT_TRUE(store.Watch(RoutesInfo(), {}, std::nullopt).ok());
}

TEST_F(ServerTest, RestartRefusesThenServesTheSameObjectsWithFreshWatchHistory) {
  json a = MustCreate("a", "a.example.com");
  MustCreate("b", "b.example.com");
  const std::string old_rv = Body(http_->Get(RoutesPath()))["metadata"]["resourceVersion"];
  const json page = Body(http_->Get(RoutesPath() + "?limit=1"));
  const std::string token = page["metadata"]["continue"];
  LineStream open_watch(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" + old_rv);
  ASSERT_EQ(open_watch.code(), 200);
  const int port = server_->port();

  std::thread restart([this] { EXPECT_TRUE(server_->Restart(milliseconds(400)).ok()); });
  EXPECT_TRUE(WaitUntil([&] { return http_->Get("/version").code == 0; }))
      << "connections are refused while the server is down";
  EXPECT_FALSE(FirstEvent(open_watch).is_object()) << "open watches end";
  restart.join();

  EXPECT_EQ(server_->port(), port);
  HttpResponse got = http_->Get(RoutesPath() + "/a");
  ASSERT_EQ(got.code, 200);
  EXPECT_EQ(Body(got)["metadata"]["resourceVersion"], a["metadata"]["resourceVersion"]);
  LineStream stale(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" + old_rv);
  json gone = FirstEvent(stale);
  ASSERT_TRUE(gone.is_object());
  EXPECT_EQ(gone["type"], "ERROR");
  EXPECT_EQ(gone["object"]["code"], 410);
  EXPECT_EQ(gone["object"]["reason"], "Expired");
  HttpResponse rest = http_->Get(RoutesPath() + "?limit=1&continue=" + token);
  ASSERT_EQ(rest.code, 200) << rest.body;
  EXPECT_EQ(Body(rest)["items"][0]["metadata"]["name"], "b");
  const std::string new_rv = Body(http_->Get(RoutesPath()))["metadata"]["resourceVersion"];
  EXPECT_GT(std::stoull(new_rv), std::stoull(old_rv));
  LineStream fresh(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" + new_rv);
  MustCreate("c", "c.example.com");
  json added = FirstEvent(fresh);
  ASSERT_TRUE(added.is_object());
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_EQ(added["object"]["metadata"]["name"], "c");
}

// errno of binding 127.0.0.1:`port` as a plain socket would (no
// SO_REUSEADDR), 0 when the bind succeeds.
int BindErrno(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = rc == 0 ? 0 : errno;
  close(fd);
  return err;
}

// A port no socket uses, from bind(0).
int UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(PortReservationTest, HoldsThePortUntilReleased) {
  const int port = UnusedPort();
  std::string error;
  PortReservation held = PortReservation::Hold(port, &error);
  ASSERT_TRUE(held.held()) << error;
  EXPECT_EQ(BindErrno(port), EADDRINUSE);
  PortReservation moved = std::move(held);
  EXPECT_FALSE(held.held());
  EXPECT_EQ(BindErrno(port), EADDRINUSE);
  moved.Release();
  EXPECT_EQ(BindErrno(port), 0);
  EXPECT_FALSE(PortReservation::Hold(70000, &error).held());
  EXPECT_NE(error.find("bad port"), std::string::npos) << error;
}

// A restarting server refuses connections but keeps its port: another
// process's listener cannot take it meanwhile (an e2e test once reached a
// replica's metrics endpoint on the port of a server restarting beside it).
TEST_F(ServerTest, ARestartingServerKeepsItsPortFromOtherSockets) {
  const int port = server_->port();
  std::thread restart([this] { EXPECT_TRUE(server_->Restart(milliseconds(400)).ok()); });
  // Why both at once: the port is free for a moment between the listener's
  // close and the reservation, and bound again once the server is back.
  EXPECT_TRUE(WaitUntil([&] {
    return http_->Get("/version").code == 0 && BindErrno(port) == EADDRINUSE;
  })) << "while connections are refused, the port cannot be bound";
  restart.join();
  EXPECT_EQ(server_->port(), port);
  EXPECT_EQ(http_->Get("/version").code, 200);
}

TEST_F(ServerTest, RestartThroughTheAdminEndpoint) {
  MustCreate("a", "a.example.com");
  const std::string old_rv = Body(http_->Get(RoutesPath()))["metadata"]["resourceVersion"];
  EXPECT_EQ(http_->Request("POST", "/admin/restart", R"({"downMs":-1})").code, 400);
  EXPECT_EQ(http_->Request("POST", "/admin/restart", R"({"downMs":"1s"})").code, 400);
  EXPECT_EQ(http_->Request("POST", "/admin/restart", "[1]").code, 400);
  HttpResponse r = http_->Request("POST", "/admin/restart", R"({"downMs":300})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["downMs"], 300);
  EXPECT_TRUE(WaitUntil([&] { return http_->Get("/version").code == 0; }));
  EXPECT_TRUE(WaitUntil([&] { return http_->Get("/version").code == 200; }));
  LineStream stale(server_->port(), RoutesPath() + "?watch=1&resourceVersion=" + old_rv);
  json gone = FirstEvent(stale);
  ASSERT_TRUE(gone.is_object());
  EXPECT_EQ(gone["object"]["code"], 410);
}

// One GET /version on a fresh connection; false when the connection was made
// but nothing (no answer, no close) came back within 5 s.
bool GetOrRefused(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool answered = true;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const char request[] = "GET /version HTTP/1.0\r\n\r\n";
    send(fd, request, sizeof(request) - 1, MSG_NOSIGNAL);
    char buf[256];
    answered = !(recv(fd, buf, sizeof(buf), 0) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }
  close(fd);
  return answered;
}

// Connections that arrive while the listener stops are refused, answered or
// closed, never left open without an answer (civetweb 1.15 leaves the ones
// it accepted just as it stopped; the server closes them).
TEST_F(ServerTest, NoConnectionIsLeftHangingByARestart) {
  std::atomic<bool> stop{false};
  std::atomic<int> hung{0}, tries{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        if (!GetOrRefused(server_->port())) ++hung;
        ++tries;
      }
    });
  }
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_TRUE(server_->Restart(milliseconds(200)).ok());
  }
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(hung.load(), 0) << "of " << tries.load() << " requests";
}

TEST_F(ServerTest, StopEndsALongRestartAtOnce) {
  ASSERT_EQ(http_->Request("POST", "/admin/restart", R"({"downMs":600000})").code, 200);
  EXPECT_TRUE(WaitUntil([&] { return http_->Get("/version").code == 0; }));
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(http_->Get("/version").code, 0) << "a stopped server stays down";
}

}  // namespace
}  // namespace routestatus::apiserver::testing
