// Unit tests of the protobuf wire reader and the Kubernetes protobuf
// decoders (envelope, v1.Namespace, DeleteOptions), including malformed
// input and a seeded random-bytes fuzz that must neither crash nor hang.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/protobuf_object.h"
#include "apiserver/protobuf_wire.h"
#include "test/apiserver/protobuf_builder.h"

namespace routestatus::apiserver::testing {
namespace {

using nlohmann::json;

// Reads every field; returns "n:type:value|..." or "ERROR: <message>".
std::string ReadAll(const std::string& bytes) {
  WireReader r(bytes);
  WireField f;
  std::string out;
  while (r.Next(&f)) {
    out += std::to_string(f.number) + ":" + std::to_string(static_cast<int>(f.type)) + ":";
    out += f.type == WireType::kLengthDelimited ? std::string(f.bytes) : std::to_string(f.value);
    out += "|";
  }
  if (!r.ok()) return "ERROR: " + r.error();
  return out;
}

struct WireCase {
  const char* name;
  std::string bytes;
  std::string want;  // exact output, or an error substring after "ERROR: "
};

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(WireReaderTest, Table) {
  const std::vector<WireCase> cases = {
      {"empty", "", ""},
      {"varint", "\x08\x96\x01", "1:0:150|"},
      {"max varint", "\x08" + Repeat("\xff", 9) + "\x01", "1:0:18446744073709551615|"},
      {"fixed32", std::string("\x15\x01\x00\x00\x80", 5), "2:5:2147483649|"},
      {"fixed64", std::string("\x19\x02\x00\x00\x00\x00\x00\x00\x00", 9), "3:1:2|"},
      {"string", "\x22\x03" "abc", "4:2:abc|"},
      {"empty string", std::string("\x22\x00", 2), "4:2:|"},
      {"group skipped", "\x0b\x10\x01\x1a\x01x\x0c\x18\x05", "3:0:5|"},
      {"nested groups skipped", "\x0b\x13\x10\x01\x14\x0c\x18\x05", "3:0:5|"},
      {"large field number", Tag((1u << 29) - 1, 0) + "\x01", "536870911:0:1|"},
      {"truncated varint", "\x08\x96", "ERROR: protobuf: truncated varint"},
      {"truncated tag", "\x80", "ERROR: protobuf: truncated varint"},
      {"varint longer than 10 bytes", "\x08" + Repeat("\xff", 10) + "\x01",
       "ERROR: protobuf: varint overflows 64 bits"},
      {"varint overflowing 64 bits", "\x08" + Repeat("\xff", 9) + "\x02",
       "ERROR: protobuf: varint overflows 64 bits"},
      {"truncated length", "\x12\x05" "ab", "ERROR: protobuf: field 2 at offset 0 claims 5 bytes"},
      {"huge length", "\x12" + Varint(uint64_t{1} << 62), "ERROR: protobuf: field 2 at offset 0"},
      {"max length", "\x12" + Varint(UINT64_MAX), "ERROR: protobuf: field 2 at offset 0"},
      {"truncated fixed64", "\x09\x01\x02", "ERROR: protobuf: truncated fixed-width field 1"},
      {"truncated fixed32", "\x0d\x01", "ERROR: protobuf: truncated fixed-width field 1"},
      {"field number 0", std::string("\x00\x01", 2), "ERROR: protobuf: invalid field number 0"},
      {"field number too large", Tag(1u << 29, 0) + "\x01",
       "ERROR: protobuf: invalid field number 536870912"},
      {"wire type 6", "\x0e", "ERROR: protobuf: invalid wire type 6"},
      {"wire type 7", "\x0f", "ERROR: protobuf: invalid wire type 7"},
      {"end group without start", "\x0c", "ERROR: protobuf: end of group 1 without a start"},
      {"mismatched end group", "\x0b\x14", "ERROR: protobuf: end of group 2 inside group 1"},
      {"unterminated group", "\x0b\x10\x01", "ERROR: protobuf: truncated group 1"},
      {"truncated field in group", "\x0b\x12\x05" "a", "ERROR: protobuf: truncated length"},
      {"groups nested too deep", Repeat("\x0b", 40) + Repeat("\x0c", 40),
       "ERROR: protobuf: groups nested deeper than 32"},
      {"fields after an error are not read", "\x08\x01\x0f\x08\x02",
       "ERROR: protobuf: invalid wire type 7"},
  };
  for (const auto& c : cases) {
    std::string got = ReadAll(c.bytes);
    if (c.want.rfind("ERROR: ", 0) == 0) {
      EXPECT_EQ(got.rfind(c.want, 0), 0u) << c.name << ": got " << got;
    } else {
      EXPECT_EQ(got, c.want) << c.name;
    }
  }
}

TEST(WireReaderTest, NestingDepthIsBounded) {
  WireReader r("\x08\x01");
  for (int i = 0; i < WireReader::kMaxDepth; ++i) r = r.Nested("\x08\x01");
  EXPECT_TRUE(r.ok());
  WireReader too_deep = r.Nested("\x08\x01");
  EXPECT_FALSE(too_deep.ok());
  WireField f;
  EXPECT_FALSE(too_deep.Next(&f));
  EXPECT_NE(too_deep.error().find("nested deeper than 32"), std::string::npos);
}

TEST(WireReaderTest, FailStopsReadingAndKeepsTheFirstError) {
  WireReader r("\x08\x01\x08\x02");
  WireField f;
  ASSERT_TRUE(r.Next(&f));
  r.Fail("first");
  r.Fail("second");
  EXPECT_FALSE(r.Next(&f));
  EXPECT_EQ(r.error(), "first");
}

TEST(WireReaderTest, Utf8) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xff"));
}

TEST(ProtobufEnvelopeTest, ParsesTypeMetaAndRaw) {
  std::string error;
  const std::string body = Envelope("v1", "Namespace", "RAW");  // env->raw points into it
  auto env = ParseProtobufEnvelope(body, &error);
  ASSERT_TRUE(env) << error;
  EXPECT_EQ(env->api_version, "v1");
  EXPECT_EQ(env->kind, "Namespace");
  EXPECT_EQ(env->raw, "RAW");
  EXPECT_EQ(env->content_encoding, "");
  EXPECT_EQ(env->content_type, "");
}

TEST(ProtobufEnvelopeTest, RejectsMissingMagicAndTruncation) {
  std::string error;
  EXPECT_FALSE(ParseProtobufEnvelope("{\"kind\":\"Namespace\"}", &error));
  EXPECT_NE(error.find("k8s\\x00"), std::string::npos) << error;
  EXPECT_FALSE(ParseProtobufEnvelope(std::string("k8s", 3), &error));
  std::string full = Envelope("v1", "Namespace", NamespaceMessage("foo"));
  for (size_t cut : {size_t{5}, size_t{10}, full.size() / 2, full.size() - 3}) {
    EXPECT_FALSE(ParseProtobufEnvelope(full.substr(0, cut), &error)) << cut;
    EXPECT_NE(error.find("protobuf:"), std::string::npos) << error;
  }
}

TEST(DecodeNamespaceTest, LabelsAnnotationsFinalizersAndOwners) {
  std::string owner = Bytes(5, "v1") + Bytes(1, "ConfigMap") + Bytes(3, "cm") + Bytes(4, "u-1") +
                      VarintField(6, 1);
  std::string time = VarintField(1, 1700000000) + VarintField(2, 0);
  std::string meta = Bytes(1, "team-x") + Bytes(2, "") + Bytes(4, "/api/v1/namespaces/team-x") +
                     Bytes(5, "uid-1") + Bytes(6, "42") + VarintField(7, 3) + Bytes(8, time) +
                     Bytes(9, time) + VarintField(10, 30) +
                     StringMap(11, {{"env", "prod"}, {"empty", ""}}) +
                     StringMap(12, {{"note", "h\xc3\xa9llo"}}) + Bytes(13, owner) +
                     Bytes(14, "example.com/cleanup") + Bytes(17, Bytes(1, "kubectl")) +
                     VarintField(99, 7) + Tag(100, 5) + std::string("\x01\x02\x03\x04", 4) +
                     Tag(101, 3) + VarintField(2, 1) + Tag(101, 4);  // an unknown group
  std::string raw = Bytes(1, meta) + Bytes(2, Bytes(1, "a/b") + Bytes(1, "kubernetes")) +
                    Bytes(3, Bytes(1, "Active") + Bytes(2, Bytes(1, "c")));
  std::string error;
  auto got = DecodeNamespace(raw, &error);
  ASSERT_TRUE(got) << error;
  json want = json::parse(R"({
    "apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "team-x", "uid": "uid-1", "resourceVersion": "42",
                 "labels": {"env": "prod", "empty": ""},
                 "annotations": {"note": "h\u00e9llo"},
                 "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm",
                                      "uid": "u-1", "controller": true}],
                 "finalizers": ["example.com/cleanup"]},
    "spec": {"finalizers": ["a/b", "kubernetes"]},
    "status": {"phase": "Active"}})");
  EXPECT_EQ(*got, want) << got->dump(2);
}

TEST(DecodeNamespaceTest, ClientGoShapeOfKubectlCreateNamespace) {
  // The bytes kubectl v1.32 sends for `kubectl create namespace foo`.
  const std::string body(
      "k8s\x00\x0a\x0f\x0a\x02v1\x12\x09Namespace\x12\x1b\x0a\x13\x0a\x03"
      "foo\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x12\x00\x1a\x02\x0a\x00"
      "\x1a\x00\x22\x00",
      54);
  std::string error;
  auto env = ParseProtobufEnvelope(body, &error);
  ASSERT_TRUE(env) << error;
  EXPECT_EQ(env->kind, "Namespace");
  auto got = DecodeNamespace(env->raw, &error);
  ASSERT_TRUE(got) << error;
  EXPECT_EQ(*got, json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"foo"},
                                  "spec":{},"status":{}})"));
}

TEST(DecodeNamespaceTest, RejectsWrongWireTypesAndBadUtf8) {
  struct Case {
    const char* name;
    std::string raw;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"name as varint", Bytes(1, VarintField(1, 5)), "ObjectMeta field 1 has wire type varint"},
      {"metadata as varint", VarintField(1, 5), "ObjectMeta field 1 has wire type varint"},
      {"generation as string", Bytes(1, Bytes(7, "x")), "ObjectMeta field 7 has wire type length"},
      {"label entry truncated", Bytes(1, Tag(11, 2) + Varint(4) + Bytes(1, "k")),
       "protobuf: field 11 at offset 0 claims 4 bytes"},
      {"label key as varint", Bytes(1, Bytes(11, VarintField(1, 3))),
       "ObjectMeta map entry field 1 has wire type varint"},
      {"invalid UTF-8 name", Bytes(1, Bytes(1, "\xff")), "ObjectMeta field 1 is not valid UTF-8"},
      {"spec finalizer as fixed32", Bytes(2, Tag(1, 5) + "abcd"),
       "NamespaceSpec field 1 has wire type fixed32"},
      {"owner controller as string", Bytes(1, Bytes(13, Bytes(6, "x"))),
       "OwnerReference field 6 has wire type length"},
  };
  for (const auto& c : cases) {
    std::string error;
    EXPECT_FALSE(DecodeNamespace(c.raw, &error)) << c.name;
    EXPECT_NE(error.find(c.error), std::string::npos) << c.name << ": " << error;
  }
}

TEST(DecodeDeleteOptionsTest, AllFields) {
  std::string raw = VarintField(1, 0) + Bytes(2, Bytes(1, "u-1") + Bytes(2, "7")) +
                    VarintField(3, 0) + Bytes(4, "Foreground") + Bytes(5, "All");
  std::string error;
  auto got = DecodeDeleteOptions(raw, &error);
  ASSERT_TRUE(got) << error;
  EXPECT_EQ(*got, json::parse(R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0,
      "preconditions":{"uid":"u-1","resourceVersion":"7"},"orphanDependents":false,
      "propagationPolicy":"Foreground","dryRun":["All"]})"));
  EXPECT_FALSE(DecodeDeleteOptions(Bytes(1, "x"), &error));
}

// Feeds `bytes` to every decoder; a decoded value must serialize.
void DecodeEverything(const std::string& bytes) {
  std::string error;
  auto env = ParseProtobufEnvelope(bytes, &error);
  std::string_view raw = env ? env->raw : std::string_view(bytes);
  if (auto ns = DecodeNamespace(raw, &error)) {
    EXPECT_NO_THROW(ns->dump());
  }
  if (auto opts = DecodeDeleteOptions(raw, &error)) {
    EXPECT_NO_THROW(opts->dump());
  }
  WireReader r(bytes);
  WireField f;
  size_t fields = 0;
  while (r.Next(&f)) ++fields;
  EXPECT_LE(fields, bytes.size());  // every field consumes at least one byte
}

TEST(ProtobufFuzzTest, RandomBytesNeverCrashOrHang) {
  std::mt19937 rng(20261129);
  const std::string valid = Envelope(
      "v1", "Namespace",
      NamespaceMessage("fuzz", {{"a", "b"}}, {{"c", "d"}}, {"example.com/f"}));
  for (int i = 0; i < 5000; ++i) {
    std::string bytes;
    if (i % 2 == 0) {
      // Random bytes, often behind the magic so the envelope parser is reached.
      size_t len = rng() % 96;
      if (i % 4 == 0) bytes.assign("k8s\0", 4);
      for (size_t k = 0; k < len; ++k) bytes.push_back(static_cast<char>(rng() & 0xff));
    } else {
      // A valid body with a few bytes changed, then maybe truncated.
      bytes = valid;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
      if (rng() % 3 == 0) bytes.resize(rng() % bytes.size());
    }
    DecodeEverything(bytes);
  }
}

}  // namespace
}  // namespace routestatus::apiserver::testing
