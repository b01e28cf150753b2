// Replays the 41 requests a real kube-apiserver 1.26 answered
// (test/apiserver/golden/kube-apiserver-1.26/, see its README) against the
// embedded server, in order, and compares: status codes, reasons, messages
// and details; whole bodies once run-to-run values are mapped or masked
// (uids, resourceVersions, times, continue tokens); watch streams event by
// event; the headers that matter; and the label sets of
// apiserver_request_total. Each difference on purpose is listed in
// kDifferences (and apiserver/README.md) and printed where it applies; the
// setup steps the recording implies but does not contain are in
// kSetupSteps. The server runs on a fake clock, so watch timeouts and
// bookmarks happen when the test moves time, not after real seconds.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/server.h"
#include "test/apiserver/http_client.h"
#include "test/testing/fake_clock.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;

const std::string kGoldenDir =
    std::string(ROUTESTATUS_SOURCE_DIR) + "/test/apiserver/golden/kube-apiserver-1.26";
const std::string kNs = "golden-1796060944";
const std::string kRoutes = "/apis/route.openshift.io/v1/namespaces/" + kNs + "/routes";

// What the embedded server answers differently on purpose, by case file
// prefix ("*" = every case). Kept in step with apiserver/README.md.
struct Difference {
  const char* id;
  const char* cases;
  const char* why;
};
const Difference kDifferences[] = {
    {"managed-fields", "*",
     "objects carry no metadata.managedFields (no field-manager bookkeeping, no server-side "
     "apply); masked in the recorded bodies"},
    {"flowschema-header", "*",
     "no X-Kubernetes-Pf-Flowschema-Uid header (no API Priority and Fairness)"},
    {"other-namespaces", "18",
     "the recorded cluster also held an earlier run's routes: the cluster-wide page is compared "
     "by shape"},
    {"apply-patch", "27",
     "the 415 lists no application/apply-patch+yaml: server-side apply is not served"},
    {"table-chunked", "30",
     "a Table comes with Content-Length, not chunked: same body, other framing"},
    {"version", "40",
     "/version names the embedded server (v1.32, the kubectl it is tested with), compared by "
     "shape"},
    {"controller-manager", "41",
     "no kube-controller-manager lists routes, so its system_client series is absent"},
};

// Steps the recording implies but does not hold.
const char* const kSetupSteps[] = {
    "before 01: POST route-crd.json (the CRD the recorded server had; see README)",
    "after 02: POST routes r0, r1, r2 (labels app=rN, host rN.example.com), seen from 11 on",
    ("before 34: /admin/compact: the recorded watch window started at 5062; a fresh embedded "
     "server remembers every version, so it is compacted to the same effect"),
    "during 35: PATCH r1/status (merge) and DELETE r2, the two changes the watch records",
};

struct Golden {
  std::string file;
  std::string method;
  std::string path;
  std::map<std::string, std::string> request_headers;
  std::string request_body;
  int code = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

Golden ReadGolden(const std::string& file) {
  Golden g;
  g.file = file;
  std::ifstream in(kGoldenDir + "/" + file);
  std::string line;
  bool in_body = false;
  bool first_request_line = true;
  static const std::regex kHeader("([A-Za-z][A-Za-z0-9-]*): (.*)");
  while (std::getline(in, line)) {
    if (in_body) {
      g.body += line + "\n";
    } else if (line.rfind("> ", 0) == 0) {
      std::string rest = line.substr(2);
      std::smatch m;
      if (first_request_line) {
        g.method = rest.substr(0, rest.find(' '));
        g.path = rest.substr(rest.find(' ') + 1);
        first_request_line = false;
      } else if (g.request_body.empty() && std::regex_match(rest, m, kHeader)) {
        g.request_headers[m[1]] = m[2];
      } else {
        g.request_body = rest;
      }
    } else if (line.rfind("< ", 0) == 0) {
      std::string rest = line.substr(2);
      std::smatch m;
      if (g.code == 0) {
        g.code = std::stoi(rest);
      } else if (std::regex_match(rest, m, kHeader)) {
        std::string name = m[1];
        std::transform(name.begin(), name.end(), name.begin(), ::tolower);
        g.headers[name] = m[2];
      }
    } else if (line.empty() && g.code != 0) {
      in_body = true;
    }
  }
  return g;
}

// The JSON values of a body: one document, or a stream of events (one per
// line, or pretty-printed).
std::vector<json> JsonValues(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  while (in >> std::ws && in.peek() != EOF) {
    json j;
    in >> j;
    out.push_back(std::move(j));
  }
  return out;
}

bool Applies(const Difference& d, const std::string& file) {
  return std::string(d.cases) == "*" || file.rfind(d.cases, 0) == 0;
}

const std::regex kUuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

// Masks what differs from run to run, wherever it sits.
void Mask(json* j) {
  if (j->is_array()) {
    for (json& v : *j) Mask(&v);
    return;
  }
  if (!j->is_object()) return;
  j->erase("managedFields");
  for (auto it = j->begin(); it != j->end(); ++it) {
    const std::string& key = it.key();
    json& v = it.value();
    if (v.is_string() && !v.get_ref<const std::string&>().empty()) {
      if (key == "uid") v = "<uid>";
      if (key == "resourceVersion") v = "<rv>";
      if (key == "creationTimestamp" || key == "deletionTimestamp") v = "<time>";
      if (key == "continue") v = "<continue>";
      if (key == "message") {
        std::string m = std::regex_replace(v.get<std::string>(), kUuid, "<uid>");
        m = std::regex_replace(m, std::regex("too old resource version: ([0-9]+) \\([0-9]+\\)"),
                               "too old resource version: $1 (<rv>)");
        v = m;
      }
    }
    Mask(&v);
  }
}

// The structure of a document: every scalar replaced by its type.
json Shape(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = Shape(it.value());
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const json& v : j) out.push_back(Shape(v));
    return out;
  }
  return j.type_name();
}

// The label sets of apiserver_request_total for routes in an exposition.
std::set<std::string> RouteSeries(const std::string& exposition, bool drop_system_clients) {
  std::set<std::string> out;
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    if (line.find("resource=\"routes\"") == std::string::npos) continue;
    if (drop_system_clients && line.find("system_client=\"\"") == std::string::npos) continue;
    out.insert(line.substr(0, line.find('}') + 1));
  }
  return out;
}

class GoldenReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.clock = &clock_;
    server_ = std::make_unique<Server>(o);
    ASSERT_TRUE(server_->Start().ok());
    http_ = std::make_unique<TinyHttpClient>(server_->port());
  }
  void TearDown() override { server_->Stop(); }

  // Records which recorded uid/resourceVersion/continue became which of ours.
  void Learn(const json& recorded, const json& actual) {
    if (recorded.is_array() && actual.is_array()) {
      for (size_t i = 0; i < std::min(recorded.size(), actual.size()); ++i) {
        Learn(recorded[i], actual[i]);
      }
      return;
    }
    if (!recorded.is_object() || !actual.is_object()) return;
    for (auto it = recorded.begin(); it != recorded.end(); ++it) {
      auto other = actual.find(it.key());
      if (other == actual.end()) continue;
      if ((it.key() == "uid" || it.key() == "resourceVersion" || it.key() == "continue") &&
          it->is_string() && other->is_string() && !it->get<std::string>().empty() &&
          !other->get<std::string>().empty()) {
        ours_[it->get<std::string>()] = other->get<std::string>();
      }
      Learn(it.value(), *other);
    }
  }
  // A recorded request with recorded versions, uids and tokens made ours.
  std::string MapPath(std::string path) const {
    for (const auto& [recorded, ours] : ours_) {
      for (const char* key : {"resourceVersion=", "continue="}) {
        std::string from = key + recorded;
        size_t at = path.find(from);
        if (at != std::string::npos) path.replace(at, from.size(), key + ours);
      }
    }
    return path;
  }
  std::string MapBody(std::string body) const {
    for (const auto& [recorded, ours] : ours_) {
      std::string from = "\"" + recorded + "\"";
      for (size_t at = body.find(from); at != std::string::npos; at = body.find(from, at + 1)) {
        body.replace(at, from.size(), "\"" + ours + "\"");
      }
    }
    return body;
  }

  void Note(const std::string& file, const Difference& d) {
    std::cout << "[golden] " << file << ": differs on purpose (" << d.id << "): " << d.why << "\n";
    RecordProperty(file.substr(0, 2) + "_differs_" + d.id, d.why);
  }

  void CompareHeaders(const Golden& g, const std::map<std::string, std::string>& ours) {
    EXPECT_EQ(ours.count("content-type") ? ours.at("content-type") : "",
              g.headers.at("content-type"));
    EXPECT_EQ(ours.count("cache-control") ? ours.at("cache-control") : "",
              g.headers.at("cache-control"));
    ASSERT_TRUE(ours.count("audit-id"));
    EXPECT_TRUE(std::regex_match(ours.at("audit-id"), kUuid)) << ours.at("audit-id");
    bool chunked = g.headers.count("transfer-encoding") != 0;
    if (chunked && g.file.rfind("30", 0) == 0) chunked = false;  // table-chunked
    EXPECT_EQ(ours.count("transfer-encoding") ? ours.at("transfer-encoding") : "",
              chunked ? "chunked" : "");
    if (!chunked) {
      EXPECT_TRUE(ours.count("content-length"));
    }
    EXPECT_FALSE(ours.count("x-kubernetes-pf-flowschema-uid"));  // flowschema-header
  }

  void CompareBodies(const Golden& g, const std::string& body) {
    std::vector<json> recorded = JsonValues(g.body);
    std::vector<json> actual;
    ASSERT_NO_THROW(actual = JsonValues(body)) << body;
    ASSERT_EQ(actual.size(), recorded.size()) << body;
    for (size_t i = 0; i < recorded.size(); ++i) {
      Learn(recorded[i], actual[i]);
      json want = recorded[i];
      json got = actual[i];
      Mask(&want);
      Mask(&got);
      if (g.file.rfind("18", 0) == 0 || g.file.rfind("40", 0) == 0) {
        want = Shape(want);
        got = Shape(got);
      }
      if (g.file.rfind("27", 0) == 0) {
        std::string m = want["message"];
        want["message"] = m.substr(0, m.find(", application/apply-patch+yaml"));
      }
      EXPECT_EQ(got.dump(2), want.dump(2));
    }
  }

  void Replay(const Golden& g) {
    std::string path = MapPath(g.path);
    std::string body = MapBody(g.request_body);
    std::map<std::string, std::string> headers;
    if (g.request_headers.count("Accept")) headers["Accept"] = g.request_headers.at("Accept");
    if (path.find("watch=") != std::string::npos) return ReplayWatch(g, path, headers);
    std::string type = g.request_headers.count("Content-Type")
                           ? g.request_headers.at("Content-Type")
                           : "application/json";
    HttpResponse r = http_->Request(g.method, path, body, type, headers);
    ASSERT_EQ(r.code, g.code) << r.body;
    CompareHeaders(g, r.headers);
    CompareBodies(g, r.body);
  }

  void ReplayWatch(const Golden& g, const std::string& path,
                   const std::map<std::string, std::string>& headers) {
    LineStream watch(server_->port(), path, "", headers);
    ASSERT_EQ(watch.code(), g.code);
    CompareHeaders(g, watch.headers());
    std::smatch m;
    ASSERT_TRUE(std::regex_search(path, m, std::regex("timeoutSeconds=([0-9]+)")));
    const int timeout = std::stoi(m[1]);
    std::string body;
    auto read_available = [&] {
      while (std::optional<std::string> line = watch.NextLine(std::chrono::milliseconds(300))) {
        body += *line + "\n";
      }
    };
    if (g.file.rfind("35", 0) == 0) {
      ASSERT_EQ(
          http_
              ->Request("PATCH", kRoutes + "/r1/status",
                        R"({"status":{"ingress":[{"routerName":"w","host":"r1.example.com"}]}})",
                        "application/merge-patch+json")
              .code,
          200);
      ASSERT_EQ(http_->Request("DELETE", kRoutes + "/r2").code, 200);
      read_available();
      // kube's watch cache sends the bookmark 2 s before the timeout.
      clock_.Advance(std::chrono::seconds(timeout - 2));
      read_available();
      clock_.Advance(std::chrono::seconds(2));
    } else {
      clock_.Advance(std::chrono::seconds(timeout));
    }
    while (std::optional<std::string> line = watch.NextLine(std::chrono::seconds(5))) {
      body += *line + "\n";
    }
    EXPECT_TRUE(watch.ended()) << "the watch did not end at its timeout";
    CompareBodies(g, body);
  }

  ::routestatus::testing::FakeClock clock_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<TinyHttpClient> http_;
  std::map<std::string, std::string> ours_;  // recorded volatile value -> the server's
};

TEST_F(GoldenReplayTest, AnswersLikeKubeApiserver126) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir)) {
    std::string name = entry.path().filename();
    if (std::regex_match(name, std::regex("[0-9]{2}-.*\\.txt"))) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 41u) << "the golden folder should hold 41 recorded cases";
  for (const char* step : kSetupSteps) std::cout << "[golden] setup: " << step << "\n";

  std::ifstream crd_file(kGoldenDir + "/route-crd.json");
  std::string crd((std::istreambuf_iterator<char>(crd_file)), std::istreambuf_iterator<char>());
  ASSERT_EQ(
      http_->Request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).code,
      201);

  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    for (const Difference& d : kDifferences) {
      if (Applies(d, file)) Note(file, d);
    }
    if (file.rfind("41", 0) == 0) {
      std::ifstream in(kGoldenDir + "/" + file);
      std::string recorded((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::set<std::string> want = RouteSeries(recorded, /*drop_system_clients=*/true);
      std::set<std::string> got = RouteSeries(http_->Get("/metrics").body, false);
      EXPECT_EQ(got, want);
      continue;
    }
    Golden g = ReadGolden(file);
    ASSERT_FALSE(g.method.empty());
    if (file.rfind("34", 0) == 0) server_->Compact();
    Replay(g);
    if (file.rfind("02", 0) == 0) {
      for (const char* name : {"r0", "r1", "r2"}) {
        json route = {{"apiVersion", "route.openshift.io/v1"},
                      {"kind", "Route"},
                      {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
                      {"spec",
                       {{"host", std::string(name) + ".example.com"},
                        {"to", {{"kind", "Service"}, {"name", "s"}}}}}};
        ASSERT_EQ(http_->Request("POST", kRoutes, route.dump()).code, 201);
      }
    }
  }
}

}  // namespace
}  // namespace routestatus::apiserver::testing
