#pragma once

// Go's words for bad JSON, which kube-apiserver passes on in its error
// messages (bad request bodies, bad continue tokens). Pure functions;
// thread-safe.

#include <optional>
#include <string>
#include <string_view>

namespace routestatus::apiserver {

// The message of the SyntaxError Go's encoding/json reports for `data`
// ("invalid character 'n' looking for beginning of object key string",
// "unexpected end of JSON input", ...), or nullopt if `data` is valid JSON.
std::optional<std::string> GoJsonSyntaxError(std::string_view data);

// kube's summarizeData(data, 30): "<empty>", a JSON object's first 30 bytes
// as text, or anything else's first 30 bytes in hex; " ..." when cut.
std::string SummarizeBody(std::string_view data);

}  // namespace routestatus::apiserver
