#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/apiserver/test_server.h"
#include "test/testing/fake_clock.h"

namespace routestatus::apiserver::testing {

// ServerTest on a fake clock with kube's defaults (a bookmark due every
// minute, a progress notification every 10 minutes): watches get bookmarks
// when kube's watch cache would send them, as the test moves time.
class FakeClockServerTest : public ServerTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o;
    o.clock = &clock_;
    return o;
  }
  // Every event the stream has ready (waits 200 ms real time for each).
  static std::vector<nlohmann::json> DrainEvents(LineStream& w) {
    std::vector<nlohmann::json> events;
    while (std::optional<std::string> line = w.NextLine(std::chrono::milliseconds(200))) {
      events.push_back(nlohmann::json::parse(*line));
    }
    return events;
  }
  // The types of DrainEvents.
  static std::vector<std::string> Drain(LineStream& w) {
    std::vector<std::string> types;
    for (const nlohmann::json& e : DrainEvents(w)) types.push_back(e["type"]);
    return types;
  }
  ::routestatus::testing::FakeClock clock_;
};

}  // namespace routestatus::apiserver::testing
