#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace routestatus::e2e {

// One sample of the Prometheus text exposition format.
struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses Prometheus text exposition (version 0.0.4). Comment and malformed
// lines are skipped. Pure function.
std::vector<PromSample> ParsePromText(std::string_view text);

// Sum of the values of samples named `name` whose labels include every pair
// of `match` (an empty value in `match` matches any value).
double SumSamples(const std::vector<PromSample>& samples, const std::string& name,
                  const std::map<std::string, std::string>& match = {});

// One blocking HTTP/1.0 request to http://127.0.0.1:port/path with a JSON
// body; returns the HTTP code (0 on a transport failure) and the response
// body in *body.
int HttpRequestLocal(const std::string& method, int port, const std::string& path,
                     const std::string& request_body, std::string* body);

// A minimal blocking HTTP/1.0 GET of http://127.0.0.1:port/path; returns the
// body, or "" on any failure (and sets *ok false).
std::string HttpGetLocal(int port, const std::string& path, bool* ok = nullptr,
                         int* http_code = nullptr);

}  // namespace routestatus::e2e
