#pragma once

#include <map>
#include <string>
#include <vector>

struct mg_connection;

namespace routestatus::apiserver {

// One parsed HTTP request (internal to the server). Value type.
struct HttpRequest {
  mg_connection* conn = nullptr;
  std::string method;
  std::string path;                           // decoded, without the query
  std::vector<std::string> segments;          // path split on '/'
  std::map<std::string, std::string> query;   // decoded; the last value of a repeated key
  std::string raw_query;                      // as received (undecoded)
  std::string body;
  bool body_too_large = false;

  std::string Header(const char* name) const;
  std::string Query(const std::string& key) const {
    auto it = query.find(key);
    return it == query.end() ? "" : it->second;
  }
  bool HasQuery(const std::string& key) const { return query.count(key) != 0; }
  // Every value of a (possibly repeated) query parameter, in order, decoded.
  std::vector<std::string> QueryValues(const std::string& key) const;
};

// Reads method, path, query and body (up to `max_body` bytes).
HttpRequest ReadRequest(mg_connection* conn, size_t max_body);

// Writes a complete response with Content-Length.
void WriteResponse(mg_connection* conn, int code, const std::string& body,
                   const std::string& content_type = "application/json",
                   const std::vector<std::pair<std::string, std::string>>& headers = {});

// Starts a chunked streaming response; then WriteChunk, then EndChunks.
// Write functions return false once the client has gone.
bool StartChunked(mg_connection* conn, int code, const std::string& content_type,
                  const std::vector<std::pair<std::string, std::string>>& headers = {});
bool WriteChunk(mg_connection* conn, const std::string& data);
void EndChunks(mg_connection* conn);

const char* ReasonPhrase(int code);

}  // namespace routestatus::apiserver
