#include "base/status.h"

#include <string>

#include <gtest/gtest.h>

#include "kubeclient/kube_client.h"

namespace routestatus::kubeclient {
namespace {

using std::chrono::milliseconds;

std::string StatusBody(const std::string& reason, int code, const std::string& extra = "") {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"msg )" +
         reason + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + extra + "}";
}

TEST(StatusFromResponseTest, Table) {
  struct Case {
    int http;
    std::string body;
    StatusCode code;
    std::string message_part;
  } cases[] = {
      {404, StatusBody("NotFound", 404), StatusCode::kNotFound, "msg NotFound"},
      {409, StatusBody("AlreadyExists", 409), StatusCode::kAlreadyExists, "msg"},
      {409, StatusBody("Conflict", 409), StatusCode::kConflict, "msg Conflict"},
      {410, StatusBody("Expired", 410), StatusCode::kGone, "msg"},
      {410, StatusBody("Gone", 410), StatusCode::kGone, "msg"},
      {429, StatusBody("TooManyRequests", 429), StatusCode::kTooManyRequests, "msg"},
      {503, StatusBody("ServiceUnavailable", 503), StatusCode::kUnavailable, "msg"},
      {500, StatusBody("InternalError", 500), StatusCode::kUnavailable, "msg"},
      {504, StatusBody("Timeout", 504), StatusCode::kTimeout, "msg"},
      {500, StatusBody("ServerTimeout", 500), StatusCode::kTimeout, "msg"},
      {401, StatusBody("Unauthorized", 401), StatusCode::kUnauthorized, "msg"},
      {403, StatusBody("Forbidden", 403), StatusCode::kForbidden, "msg"},
      {422, StatusBody("Invalid", 422), StatusCode::kInvalid, "msg"},
      {400, StatusBody("BadRequest", 400), StatusCode::kInvalid, "msg"},
      // Unknown reason: the HTTP code decides.
      {409, StatusBody("SomethingNew", 409), StatusCode::kConflict, "msg SomethingNew"},
      {418, StatusBody("", 418), StatusCode::kInvalid, "msg"},
      // Not a Status: HTML pages, text, empty bodies.
      {502, "<html><body><h1>502 Bad Gateway</h1></body></html>", StatusCode::kUnavailable,
       "HTTP 502: <html>"},
      {503, "", StatusCode::kUnavailable, "HTTP 503"},
      {404, "404 page not found\n", StatusCode::kNotFound, "404 page not found"},
      {401, "Unauthorized", StatusCode::kUnauthorized, "HTTP 401"},
      {429, "{}", StatusCode::kTooManyRequests, "HTTP 429"},
      {410, R"({"kind":"Other","reason":"NotFound"})", StatusCode::kGone, "HTTP 410"},
      {200, "", StatusCode::kInternal, "HTTP 200"},
      {302, "", StatusCode::kInternal, "HTTP 302"},
      {599, "", StatusCode::kUnavailable, "HTTP 599"},
  };
  for (const auto& c : cases) {
    Status s = StatusFromResponse(c.http, c.body);
    EXPECT_EQ(s.code(), c.code) << c.http << " " << c.body;
    EXPECT_NE(s.message().find(c.message_part), std::string::npos) << s.message();
    EXPECT_FALSE(s.ok());
  }
}

TEST(StatusFromResponseTest, WrongFieldTypesDoNotThrow) {
  const char* bodies[] = {R"({"kind":5})", R"({"kind":"Status","reason":5,"message":[],"details":3})",
                          R"({"kind":null})", R"({"kind":"Status","details":{"retryAfterSeconds":1.5}})"};
  for (const char* b : bodies) {
    Status s = StatusFromResponse(503, b);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << b;
  }
  auto ev = DecodeWatchEvent(R"({"type":"ERROR","object":{"kind":5,"code":"x"}})");
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->ErrorStatus().code(), StatusCode::kUnavailable);
}

TEST(StatusFromResponseTest, HtmlExcerptIsShortAndPrintable) {
  std::string page = "<html>\n\t" + std::string(5000, 'x') + "</html>";
  Status s = StatusFromResponse(502, page);
  EXPECT_LT(s.message().size(), 300u);
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  EXPECT_EQ(s.message().find('\t'), std::string::npos);
}

TEST(StatusFromResponseTest, RetryAfter) {
  Status from_body = StatusFromResponse(
      429, StatusBody("TooManyRequests", 429, R"(,"details":{"retryAfterSeconds":3})"));
  EXPECT_EQ(from_body.retry_after(), milliseconds(3000));
  // The header value wins over the body.
  Status header = StatusFromResponse(
      429, StatusBody("TooManyRequests", 429, R"(,"details":{"retryAfterSeconds":3})"),
      milliseconds(1000));
  EXPECT_EQ(header.retry_after(), milliseconds(1000));
  EXPECT_EQ(StatusFromResponse(429, "").retry_after(), std::nullopt);
  EXPECT_EQ(StatusFromResponse(503, "", milliseconds(2000)).retry_after(), milliseconds(2000));
  // A non-integer retryAfterSeconds is ignored, not a crash.
  Status odd = StatusFromResponse(
      429, StatusBody("TooManyRequests", 429, R"(,"details":{"retryAfterSeconds":"x"})"));
  EXPECT_EQ(odd.retry_after(), std::nullopt);
  EXPECT_EQ(odd.code(), StatusCode::kTooManyRequests);
}

TEST(StatusTest, RetryableAndNames) {
  EXPECT_TRUE(Status(StatusCode::kConflict, "").IsRetryable());
  EXPECT_TRUE(Status(StatusCode::kTooManyRequests, "").IsRetryable());
  EXPECT_FALSE(Status(StatusCode::kNotFound, "").IsRetryable());
  EXPECT_FALSE(Status(StatusCode::kInvalid, "").IsRetryable());
  EXPECT_FALSE(Status(StatusCode::kForbidden, "").IsRetryable());
  EXPECT_EQ(Status(StatusCode::kGone, "too old").ToString(), "gone: too old");
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  EXPECT_STREQ(StatusCodeName(StatusCode::kTooManyRequests), "too_many_requests");
}

TEST(DecodeWatchEventTest, ValidEvents) {
  auto ev = DecodeWatchEvent(
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"9"}}})");
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->type, WatchEventType::kAdded);
  EXPECT_EQ(ev->ResourceVersion(), "9");

  auto bm = DecodeWatchEvent(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}})");
  ASSERT_TRUE(bm.ok());
  EXPECT_EQ(bm->type, WatchEventType::kBookmark);
  EXPECT_EQ(bm->ResourceVersion(), "12");

  auto gone = DecodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"x("status":"Failure","message":"too old resource version: 1 (50)","reason":"Expired","code":410}})x");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->type, WatchEventType::kError);
  Status s = gone->ErrorStatus();
  EXPECT_EQ(s.code(), StatusCode::kGone);
  EXPECT_NE(s.message().find("too old resource version"), std::string::npos);

  auto odd_error = DecodeWatchEvent(R"({"type":"ERROR","object":{}})");
  ASSERT_TRUE(odd_error.ok());
  EXPECT_EQ(odd_error->ErrorStatus().code(), StatusCode::kUnavailable);

  for (const char* t : {"MODIFIED", "DELETED"}) {
    auto e = DecodeWatchEvent(std::string(R"({"type":")") + t + R"(","object":{}})");
    ASSERT_TRUE(e.ok()) << t;
    EXPECT_STREQ(WatchEventTypeName(e->type), t);
    EXPECT_EQ(e->ResourceVersion(), "");
  }
}

TEST(FailureClassTest, HttpAnswersByCodeTransportFailuresByMessage) {
  struct Case {
    Status status;
    FailureClass want;
  } cases[] = {
      {StatusFromResponse(503, StatusBody("ServiceUnavailable", 503)), FailureClass::kServerError},
      {StatusFromResponse(500, StatusBody("ServerTimeout", 500)), FailureClass::kServerError},
      {StatusFromResponse(504, ""), FailureClass::kServerError},
      {StatusFromResponse(502, "<html>Bad Gateway</html>"), FailureClass::kServerError},
      {StatusFromResponse(429, StatusBody("TooManyRequests", 429)), FailureClass::kThrottled},
      {StatusFromResponse(410, StatusBody("Expired", 410)), FailureClass::kAnswered},
      {StatusFromResponse(409, StatusBody("Conflict", 409)), FailureClass::kAnswered},
      {StatusFromResponse(403, StatusBody("Forbidden", 403)), FailureClass::kAnswered},
      {Status(StatusCode::kUnavailable, "GET /apis: Failed to connect: Connection refused"),
       FailureClass::kConnectionRefused},
      {Status(StatusCode::kUnavailable, "GET /apis: Failed to connect to any resolved endpoint"),
       FailureClass::kConnectionRefused},
      {Status(StatusCode::kUnavailable, "watch /apis: Connection reset by peer"),
       FailureClass::kConnectionReset},
      {Status(StatusCode::kUnavailable, "GET /x: End of file"), FailureClass::kConnectionReset},
      {Status(StatusCode::kUnavailable, "watch /x: watch stream truncated mid-event (3 bytes)"),
       FailureClass::kConnectionReset},
      {Status(StatusCode::kTimeout, "GET /x: timed out: Operation canceled"), FailureClass::kTimeout},
      {Status(StatusCode::kUnavailable, "GET /x: certificate verify failed"),
       FailureClass::kConnectionError},
      {Status(StatusCode::kCancelled, "cancelled"), FailureClass::kAnswered},
      {Status(StatusCode::kClosed, "watch closed by the server"), FailureClass::kAnswered},
      {Status::Ok(), FailureClass::kAnswered},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(FailureClassOf(c.status), c.want) << c.status.ToString();
    EXPECT_EQ(IsNoAnswer(c.want), c.status.http_code() == 0 && c.want != FailureClass::kAnswered)
        << c.status.ToString();
  }
  EXPECT_STREQ(FailureClassName(FailureClass::kConnectionRefused), "connection_refused");
  EXPECT_STREQ(FailureClassName(FailureClass::kServerError), "server_error");
  EXPECT_EQ(StatusFromResponse(503, "").http_code(), 503);
}

TEST(DecodeWatchEventTest, MalformedEventsAreInvalid) {
  const char* cases[] = {
      "", "{", "[]", "null", R"({"type":"ADDED"})", R"({"object":{}})",
      R"({"type":"RENAMED","object":{}})", R"({"type":1,"object":{}})",
      R"({"type":"ADDED","object":[]})", R"({"type":"ADDED","object":{}} trailing)",
      "\xff\xfe{\"type\":\"ADDED\",\"object\":{}}",
  };
  for (const char* c : cases) {
    auto e = DecodeWatchEvent(c);
    ASSERT_FALSE(e.ok()) << c;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalid) << c;
  }
}

}  // namespace
}  // namespace routestatus::kubeclient
