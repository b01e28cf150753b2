// RouteFromText (one pass, no tree), JsonReader and RawListPageFromText.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"

namespace routestatus::kubeclient {
namespace {

using nlohmann::json;

const char kRoute[] =
    R"({"kind":"Route","metadata":{"name":"r","namespace":"n","uid":"u","resourceVersion":"7",)"
    R"("generation":4,"labels":{"b":"2","a":"1"},"creationTimestamp":"2026-11-29T14:00:00Z",)"
    R"("annotations":{"k":"v"}},"spec":{"host":"h.example.com","to":{"kind":"Service","name":"s",)"
    R"("weight":[1,{"x":null}]},"unknown":{"deep":[true,false,-1.5e3]}},)"
    R"("status":{"ingress":[{"routerName":"default","conditions":[{"type":"Admitted",)"
    R"("status":"True"}]}]}})";

TEST(JsonTextTest, RouteFromTextKeepsTheExactTextAndDecodes) {
  std::string text = std::string(" \n") + kRoute + "\t ";
  auto r = RouteFromText(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // status.ingress byte for byte; nothing else of the text is kept.
  EXPECT_EQ(r->ingress_json,
            R"([{"routerName":"default","conditions":[{"type":"Admitted","status":"True"}]}])");
  EXPECT_EQ(r->Key(), "n/r");
  EXPECT_EQ(r->metadata.generation, 4);
  EXPECT_EQ(r->metadata.labels.size(), 2u);
  EXPECT_EQ(r->metadata.labels.at("a"), "1");
  EXPECT_EQ(r->spec.host, "h.example.com");
  ASSERT_EQ(r->Ingress().size(), 1u);
  EXPECT_EQ(r->Ingress()[0].conditions.at(0).status, "True");
  auto updated = IngressStatusPatch(*r, "other", RouteIngress{"other", "h", "", "", {}});
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ((*updated)["status"]["ingress"].size(), 2u);
  EXPECT_EQ((*updated)["metadata"], (json{{"resourceVersion", "7"}}));
}

TEST(JsonTextTest, EscapesUnicodeAndDuplicateKeys) {
  auto r = RouteFromText(
      R"({"metadata":{"name":"first","n\u0061me":"a\"b\\c\u00e9\ud83d\ude00\/","namespace":"n"},)"
      R"("spec":5,"spec":{"host":"x"}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->metadata.name, "a\"b\\c\xC3\xA9\xF0\x9F\x98\x80/");  // the last "name" wins
  EXPECT_EQ(r->spec.host, "x");                                       // and the last "spec"
}

TEST(JsonTextTest, RejectsWhatNlohmannRejects) {
  const char* bad[] = {
      "",
      "{",
      R"({"metadata":{"name":"r"}} x)",
      R"({"metadata":{"name":"r"},})",
      R"({"metadata":{"name":"r",}})",
      R"({"metadata":{"name":"\ud800"}})",         // lone high surrogate
      R"({"metadata":{"name":"\udc00"}})",         // lone low surrogate
      "{\"metadata\":{\"name\":\"\xC0\xAF\"}}",    // overlong UTF-8
      "{\"metadata\":{\"name\":\"\xED\xA0\x80\"}}",  // UTF-8 surrogate
      "{\"metadata\":{\"name\":\"a\tb\"}}",        // raw control character
      R"({"metadata":{"name":"r","generation":01}})",
      R"({"metadata":{"name":"r","generation":1.}})",
      R"({"metadata":{"name":"r","generation":-}})",
      R"({"metadata":{"name":"r"},"x":tru})",
      R"({"metadata":{"name":"r"},"x":[1 2]})",
      R"({'metadata':{}})",
  };
  for (const char* text : bad) {
    EXPECT_TRUE(json::parse(text, nullptr, false).is_discarded()) << text;
    auto r = RouteFromText(text);
    EXPECT_FALSE(r.ok()) << text;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
    }
  }
}

TEST(JsonTextTest, ShapeErrorsMatchTheTreeDecoder) {
  const char* cases[] = {
      R"([1,2])",
      R"({"metadata":[]})",
      R"({"metadata":{"name":""}})",
      R"({"metadata":{"name":"r","namespace":3}})",
      R"({"metadata":{"name":"r","generation":2.5}})",
      R"({"metadata":{"name":"r","generation":1e2}})",
      R"({"metadata":{"name":"r","generation":"3"}})",
      R"({"metadata":{"name":"r","generation":99999999999999999999}})",
      R"({"metadata":{"name":"r","generation":-9223372036854775808}})",
      R"({"metadata":{"name":"r","generation":18446744073709551615}})",
      R"({"metadata":{"name":"r","labels":{"a":1,"a":"x"}}})",
      R"({"metadata":{"name":"r","labels":{"a":"x","b":1}}})",
      R"({"metadata":{"name":"r","labels":[]}})",
      R"({"metadata":{"name":"r","creationTimestamp":"yesterday"}})",
      R"({"metadata":{"name":"r"},"spec":"x"})",
      R"({"metadata":{"name":"r"},"spec":{"host":1}})",
      R"({"metadata":{"name":"r"},"spec":null,"status":{"ingress":{}}})",
      R"({"metadata":{"name":"r"},"status":{"ingress":[1,{"routerName":2,"conditions":{}}]}})",
      "\xEF\xBB\xBF{\"metadata\":{\"name\":\"bom\"}}",
  };
  for (const char* text : cases) {
    json tree = json::parse(text, nullptr, false);
    ASSERT_FALSE(tree.is_discarded()) << text;
    auto slow = RouteFromJson(tree);
    auto fast = RouteFromText(text);
    ASSERT_EQ(fast.ok(), slow.ok()) << text << ": " << fast.status().ToString() << " vs "
                                    << slow.status().ToString();
    if (fast.ok()) {
      EXPECT_EQ(fast->metadata.generation, slow->metadata.generation) << text;
      EXPECT_EQ(fast->metadata.labels, slow->metadata.labels) << text;
      EXPECT_EQ(fast->Ingress().size(), slow->Ingress().size()) << text;
    } else {
      EXPECT_EQ(fast.status().ToString(), slow.status().ToString()) << text;
    }
  }
}

TEST(JsonTextTest, DeepNestingIsSkippedWithoutRecursion) {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  auto r = RouteFromText(R"({"metadata":{"name":"r"},"x":)" + deep + "}");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST(JsonTextTest, RawListPageSplitsItemsExactly) {
  std::string body = std::string(R"({"kind":"RouteList","metadata":{"resourceVersion":"42",)") +
                     R"("continue":"next"},"items":[ )" + kRoute + " ,\n" +
                     R"({"metadata":{"name":"b"}}],"extra":1})";
  auto page = RawListPageFromText(body);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->resource_version, "42");
  EXPECT_EQ(page->continue_token, "next");
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->Item(0), kRoute);
  EXPECT_EQ(page->Item(1), R"({"metadata":{"name":"b"}})");
}

TEST(JsonTextTest, RawListPageEdgeCases) {
  auto empty = RawListPageFromText(R"({"items":null,"metadata":{"resourceVersion":5}})");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(empty->resource_version, "");  // not a string: ignored, as List() does
  EXPECT_FALSE(RawListPageFromText(R"({"items":{}})").ok());
  EXPECT_FALSE(RawListPageFromText(R"({"items":[1,]})").ok());
  EXPECT_FALSE(RawListPageFromText(R"({"items":[]} [])").ok());
  EXPECT_FALSE(RawListPageFromText("<html>").ok());
  auto odd = RawListPageFromText(R"({"items":[1,"x",{}]})");
  ASSERT_TRUE(odd.ok());
  ASSERT_EQ(odd->size(), 3u);
  EXPECT_EQ(odd->Item(1), "\"x\"");
  EXPECT_FALSE(RouteFromText(odd->Item(0)).ok());
}

// A fake whose List() returns trees: the default ListRaw dumps them.
class TreeClient : public KubeClient {
 public:
  StatusOr<ListPage> List(const ResourceRef&, const std::string&, const ListOptions&) override {
    ListPage p;
    p.items = {json::parse(R"({"metadata":{"name":"a"}})"), json::parse("[1]")};
    p.resource_version = "3";
    p.continue_token = "c";
    return p;
  }
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef&, const std::string&,
                                               const WatchOptions&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<json> Get(const ResourceRef&, const std::string&, const std::string&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<json> Create(const ResourceRef&, const std::string&, const json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<json> Update(const ResourceRef&, const json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<json> UpdateStatus(const ResourceRef&, const json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  StatusOr<json> MergePatchStatus(const ResourceRef&, const std::string&, const std::string&,
                                  const json&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
  Status Delete(const ResourceRef&, const std::string&, const std::string&) override {
    return Status(StatusCode::kInternal, "n/a");
  }
};

TEST(JsonTextTest, DefaultListRawDumpsListItems) {
  TreeClient client;
  auto page = client.ListRaw(RoutesResource(), "", ListOptions());
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->resource_version, "3");
  EXPECT_EQ(page->continue_token, "c");
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->Item(0), R"({"metadata":{"name":"a"}})");
  EXPECT_EQ(page->Item(1), "[1]");
}

}  // namespace
}  // namespace routestatus::kubeclient
