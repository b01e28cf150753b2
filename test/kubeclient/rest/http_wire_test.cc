// The socket transport's pure HTTP/1.1 pieces: server URLs, response
// heads and body framing, fed in every split a network could produce.
#include "kubeclient/rest/http_wire.h"

#include <gtest/gtest.h>

namespace routestatus::kubeclient::rest {
namespace {

TEST(HttpWireTest, ServerUrls) {
  auto u = ParseServerUrl("https://api.example.com:6443/k8s/clusters/c-1/");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "api.example.com");
  EXPECT_EQ(u->port, 6443);
  EXPECT_FALSE(u->default_port);
  EXPECT_EQ(u->path_prefix, "/k8s/clusters/c-1");
  EXPECT_EQ(u->Authority(true), "api.example.com:6443");

  auto v6 = ParseServerUrl("http://[::1]:8080");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->Authority(true), "[::1]:8080");
  EXPECT_TRUE(IsIpLiteral(v6->host));

  auto plain = ParseServerUrl("https://kubernetes.default.svc");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->port, 443);
  EXPECT_TRUE(plain->default_port);
  EXPECT_EQ(plain->path_prefix, "");
  EXPECT_FALSE(IsIpLiteral(plain->host));

  EXPECT_FALSE(ParseServerUrl("ftp://x").ok());
  EXPECT_FALSE(ParseServerUrl("https://:443").ok());
  EXPECT_FALSE(ParseServerUrl("https://h:99999").ok());
  EXPECT_FALSE(ParseServerUrl("https://[::1").ok());
}

TEST(HttpWireTest, Base64) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("user:pass"), "dXNlcjpwYXNz");
}

TEST(HttpWireTest, ResponseHeadNeedsTheBlankLine) {
  const std::string head =
      "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
      "retry-after: 3\r\nTransfer-Encoding: gzip, Chunked\r\n\r\nBODY";
  ResponseHead h;
  size_t consumed = 0;
  std::string error;
  for (size_t n = 0; n < head.size() - 4; ++n) {
    EXPECT_EQ(ParseResponseHead(head.substr(0, n), &h, &consumed, &error), HeadParse::kNeedMore)
        << n;
  }
  ASSERT_EQ(ParseResponseHead(head, &h, &consumed, &error), HeadParse::kDone) << error;
  EXPECT_EQ(h.status, 429);
  EXPECT_TRUE(h.chunked);
  EXPECT_EQ(h.retry_after, "3");
  EXPECT_EQ(head.substr(consumed), "BODY");
}

TEST(HttpWireTest, BadHeadsAreInvalid) {
  ResponseHead h;
  size_t consumed = 0;
  std::string error;
  EXPECT_EQ(ParseResponseHead("SSH-2.0-OpenSSH\r\n\r\n", &h, &consumed, &error),
            HeadParse::kInvalid);
  EXPECT_EQ(ParseResponseHead("HTTP/1.1 2x0 OK\r\n\r\n", &h, &consumed, &error),
            HeadParse::kInvalid);
  EXPECT_EQ(ParseResponseHead("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", &h, &consumed,
                              &error),
            HeadParse::kInvalid);
  EXPECT_EQ(ParseResponseHead(std::string(70 * 1024, 'x'), &h, &consumed, &error),
            HeadParse::kInvalid);
}

// Decodes `wire` fed `step` bytes at a time.
std::string Decode(const ResponseHead& head, const std::string& wire, size_t step, bool* done,
                   bool* ok) {
  BodyDecoder d(head);
  std::string out, error;
  *ok = true;
  for (size_t i = 0; i < wire.size() && *ok; i += step) {
    *ok = d.Feed(std::string_view(wire).substr(i, step), &out, &error);
  }
  *done = d.done();
  return out;
}

TEST(HttpWireTest, ChunkedBodyInEverySplit) {
  ResponseHead head;
  head.chunked = true;
  const std::string wire = "5;ext=1\r\nhello\r\n1A\r\n" + std::string(26, 'z') +
                           "\r\n0\r\nX-Trailer: t\r\n\r\nafter";
  for (size_t step = 1; step <= wire.size(); ++step) {
    bool done = false, ok = false;
    std::string body = Decode(head, wire, step, &done, &ok);
    ASSERT_TRUE(ok) << step;
    EXPECT_TRUE(done) << step;
    EXPECT_EQ(body, "hello" + std::string(26, 'z')) << step;
  }
}

TEST(HttpWireTest, MalformedChunksFail) {
  ResponseHead head;
  head.chunked = true;
  bool done = false, ok = true;
  Decode(head, "zz\r\nab\r\n", 3, &done, &ok);
  EXPECT_FALSE(ok);
  Decode(head, "2\r\nabXY\r\n", 1, &done, &ok);
  EXPECT_FALSE(ok) << "chunk data must end in CRLF";
  Decode(head, std::string(5000, '1'), 100, &done, &ok);
  EXPECT_FALSE(ok) << "an endless chunk-size line";
}

TEST(HttpWireTest, IdentityBodies) {
  ResponseHead sized;
  sized.content_length = 4;
  bool done = false, ok = false;
  EXPECT_EQ(Decode(sized, "abcdEXTRA", 2, &done, &ok), "abcd");
  EXPECT_TRUE(done);
  BodyDecoder until_close{ResponseHead()};
  EXPECT_TRUE(until_close.EndsAtClose());
  EXPECT_FALSE(BodyDecoder(sized).EndsAtClose());
  ResponseHead empty;
  empty.content_length = 0;
  EXPECT_TRUE(BodyDecoder(empty).done());
}

}  // namespace
}  // namespace routestatus::kubeclient::rest
