// Conformance over real HTTP for Kubernetes protobuf request bodies
// (application/vnd.kubernetes.protobuf), as kubectl's typed clients send
// them: namespaces decode, custom resources answer 415, malformed bodies
// 400, protobuf-only Accept 406; responses are JSON.

#include "test/apiserver/protobuf_builder.h"
#include "test/apiserver/test_server.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;

constexpr char kProtobuf[] = "application/vnd.kubernetes.protobuf";
const std::map<std::string, std::string> kKubectlAccept = {
    {"Accept", "application/vnd.kubernetes.protobuf,application/json"}};

class ProtobufTest : public ServerTest {
 protected:
  HttpResponse PostProtobuf(const std::string& path, const std::string& body,
                            const std::map<std::string, std::string>& headers = kKubectlAccept) {
    return http_->Request("POST", path, body, kProtobuf, headers);
  }
};

TEST_F(ProtobufTest, CreateNamespaceThenGetItAsJson) {
  std::string body = Envelope(
      "v1", "Namespace",
      NamespaceMessage("proto-ns", {{"team", "blue"}}, {{"owner", "ops"}}, {"example.com/keep"}));
  HttpResponse created = PostProtobuf("/api/v1/namespaces?fieldManager=kubectl-create", body);
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(created.headers["content-type"], "application/json");
  json obj = Body(created);
  EXPECT_EQ(obj["metadata"]["name"], "proto-ns");

  HttpResponse got = http_->Get("/api/v1/namespaces/proto-ns");
  ASSERT_EQ(got.code, 200) << got.body;
  json ns = Body(got);
  EXPECT_EQ(ns["kind"], "Namespace");
  EXPECT_EQ(ns["metadata"]["labels"]["team"], "blue");
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "proto-ns");
  EXPECT_EQ(ns["metadata"]["annotations"]["owner"], "ops");
  EXPECT_EQ(ns["spec"]["finalizers"], json::array({"example.com/keep", "kubernetes"}));
  EXPECT_EQ(ns["status"]["phase"], "Active");
  EXPECT_EQ(server_->RequestCount("POST", "namespaces", "-", 201), 1u);
}

TEST_F(ProtobufTest, UpdateNamespaceWithProtobufHonoursResourceVersion) {
  HttpResponse got = http_->Get("/api/v1/namespaces/team-a");
  ASSERT_EQ(got.code, 200);
  std::string rv = Body(got)["metadata"]["resourceVersion"];
  std::string meta = Bytes(1, "team-a") + Bytes(6, rv) + StringMap(11, {{"env", "dev"}});
  std::string body =
      Envelope("v1", "Namespace", Bytes(1, meta) + Bytes(2, Bytes(1, "example.com/new")));
  HttpResponse updated =
      http_->Request("PUT", "/api/v1/namespaces/team-a", body, kProtobuf, kKubectlAccept);
  ASSERT_EQ(updated.code, 200) << updated.body;
  EXPECT_EQ(Body(updated)["metadata"]["labels"]["env"], "dev");
  // Like kube, an update does not change a namespace's finalizers (/finalize does).
  EXPECT_EQ(Body(updated)["spec"]["finalizers"], json::array({"kubernetes"}));
  // The same (now stale) resourceVersion again: 409 like a JSON update.
  HttpResponse stale =
      http_->Request("PUT", "/api/v1/namespaces/team-a", body, kProtobuf, kKubectlAccept);
  EXPECT_EQ(stale.code, 409) << stale.body;
  EXPECT_EQ(Body(stale)["reason"], "Conflict");
}

TEST_F(ProtobufTest, DeleteWithProtobufDeleteOptionsChecksPreconditions) {
  std::string wrong = Envelope("v1", "DeleteOptions", Bytes(2, Bytes(1, "not-the-uid")));
  HttpResponse r =
      http_->Request("DELETE", "/api/v1/namespaces/team-a", wrong, kProtobuf, kKubectlAccept);
  EXPECT_EQ(r.code, 409) << r.body;
  std::string uid = Body(http_->Get("/api/v1/namespaces/team-a"))["metadata"]["uid"];
  std::string right = Envelope("v1", "DeleteOptions", Bytes(2, Bytes(1, uid)));
  r = http_->Request("DELETE", "/api/v1/namespaces/team-a", right, kProtobuf, kKubectlAccept);
  EXPECT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(http_->Get("/api/v1/namespaces/team-a").code, 404);
}

TEST_F(ProtobufTest, CustomResourcesAreJsonOnly) {
  // A route can never be protobuf (CRD-backed): kube answers 415.
  std::string body = Envelope("route.openshift.io/v1", "Route", Bytes(1, Bytes(1, "r")));
  HttpResponse r = PostProtobuf(RoutesPath(), body);
  ASSERT_EQ(r.code, 415) << r.body;
  json expected = {{"kind", "Status"},
                   {"apiVersion", "v1"},
                   {"metadata", json::object()},
                   {"status", "Failure"},
                   {"message",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json"},
                   {"reason", "UnsupportedMediaType"},
                   {"code", 415}};
  EXPECT_EQ(Body(r), expected);
  EXPECT_EQ(server_->RequestCount("POST", "routes", "-", 415), 1u);
  HttpResponse put = http_->Request("PUT", RoutesPath() + "/r", body, kProtobuf, kKubectlAccept);
  EXPECT_EQ(put.code, 415) << put.body;
  // Other body types are refused too; namespaces list protobuf as accepted.
  HttpResponse yaml = http_->Request("POST", "/api/v1/namespaces", "metadata: {name: y}",
                                     "application/yaml");
  EXPECT_EQ(yaml.code, 415) << yaml.body;
  EXPECT_NE(Body(yaml)["message"].get<std::string>().find(
                "include: application/json, application/vnd.kubernetes.protobuf"),
            std::string::npos)
      << yaml.body;
  // JSON with parameters still decodes.
  HttpResponse json_utf8 = http_->Request("POST", RoutesPath(), Route("j", "j.example.com").dump(),
                                          "application/json; charset=utf-8");
  EXPECT_EQ(json_utf8.code, 201) << json_utf8.body;
}

TEST_F(ProtobufTest, MalformedProtobufIsBadRequest) {
  std::string full = Envelope("v1", "Namespace", NamespaceMessage("trunc", {{"a", "b"}}));
  struct Case {
    const char* name;
    std::string body;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"truncated", full.substr(0, full.size() - 7), "protobuf: field"},
      {"no magic", full.substr(4), "does not start with the \"k8s\\x00\" prefix"},
      {"json sent as protobuf", R"({"metadata":{"name":"x"}})", "does not start with"},
      {"wrong kind", Envelope("v1", "Pod", NamespaceMessage("p")), "got v1, Kind=Pod"},
      {"no kind", Envelope("v1", "", NamespaceMessage("p")), "'Kind' is missing"},
      {"over-long varint", std::string("k8s\0\x10", 5) + std::string(11, '\xff'),
       "varint overflows 64 bits"},
      {"bad utf-8 name", Envelope("v1", "Namespace", Bytes(1, Bytes(1, "\xc3("))), "not valid UTF-8"},
  };
  for (const auto& c : cases) {
    HttpResponse r = PostProtobuf("/api/v1/namespaces", c.body);
    EXPECT_EQ(r.code, 400) << c.name << ": " << r.body;
    json status = Body(r);
    EXPECT_EQ(status["kind"], "Status") << c.name;
    EXPECT_EQ(status["reason"], "BadRequest") << c.name;
    std::string message = status["message"].is_string() ? status["message"].get<std::string>() : "";
    EXPECT_EQ(message.rfind("the object provided is unrecognized (must be of type Namespace): ", 0),
              0u)
        << c.name << ": " << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.name << ": " << message;
  }
  EXPECT_EQ(http_->Get("/api/v1/namespaces/trunc").code, 404);
}

TEST_F(ProtobufTest, ProtobufOnlyAcceptIsNotAcceptable) {
  std::string body = Envelope("v1", "Namespace", NamespaceMessage("pb-only"));
  HttpResponse r = PostProtobuf("/api/v1/namespaces", body, {{"Accept", kProtobuf}});
  EXPECT_EQ(r.code, 406) << r.body;
  EXPECT_EQ(Body(r)["reason"], "NotAcceptable");
  EXPECT_EQ(http_->Get("/api/v1/namespaces/pb-only").code, 404);  // nothing was created
  HttpResponse get = http_->Request("GET", "/api/v1/namespaces/team-a", "", "application/json",
                                    {{"Accept", kProtobuf}});
  EXPECT_EQ(get.code, 406) << get.body;
  HttpResponse both = http_->Request("GET", "/api/v1/namespaces/team-a", "", "application/json",
                                     kKubectlAccept);
  EXPECT_EQ(both.code, 200) << both.body;
  EXPECT_EQ(both.headers["content-type"], "application/json");
}

}  // namespace
}  // namespace routestatus::apiserver::testing
