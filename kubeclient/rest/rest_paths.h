#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "kubeclient/kube_client.h"

namespace routestatus::kubeclient::rest {

// Pure helpers of the REST client (no I/O, no cpprest): URL paths, query
// strings, header values. Thread-safe (stateless).

// /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUBRESOURCE]] for the core group,
// /apis/GROUP/VERSION/... otherwise. `ns` "" on a namespaced resource means
// all namespaces (list/watch). Path segments are percent-encoded.
std::string ResourcePath(const ResourceRef& res, const std::string& ns, const std::string& name = "",
                         const std::string& subresource = "");

// "?limit=..&continue=..&labelSelector=..&fieldSelector=..&resourceVersion=.."
// (only the set ones; "" when none is set). Values are percent-encoded.
std::string ListQuery(const ListOptions& options);
// "?watch=true&allowWatchBookmarks=true&timeoutSeconds=N[&resourceVersion=..]
// [&labelSelector=..][&fieldSelector=..]".
std::string WatchQuery(const WatchOptions& options);

// RFC 3986 percent-encoding of a query value or path segment (unreserved
// characters kept).
std::string PercentEncode(std::string_view text);

// "routestatus/<version> (<os>/<arch>)", e.g. "routestatus/dev (linux/amd64)".
std::string DefaultUserAgent(const std::string& version);

// A Retry-After header value in delta-seconds ("3"); nullopt for anything
// else (HTTP dates are not used by the Kubernetes API server).
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value);

}  // namespace routestatus::kubeclient::rest
