#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cmd/route-status-controller/config.h"

namespace routestatus::cmd {

// Appends one message per invalid setting of `options` to `errors`.
// `router_name_set` says whether --router-name came from a flag, env or file
// (required for `clear`, which must never fall back to the default name).
// Pure; thread-safe.
void ValidateOptions(const Options& options, Command command, bool router_name_set,
                     std::vector<std::string>& errors);

// True if `s` is a DNS-1123 subdomain (lower-case labels of [a-z0-9-],
// each 1..63 long, not starting/ending with '-', total <= 253).
bool IsDns1123Subdomain(std::string_view s);

// True if `s` is a single DNS-1123 label (1..63 chars).
bool IsDns1123Label(std::string_view s);

// Replaces "user:password@" in any "scheme://user:password@host" with
// "<redacted>@". Other text is returned unchanged.
std::string RedactUrlCredentials(const std::string& s);

// `s` safe to print on a terminal or in a log line: valid UTF-8 stays as it
// is; every other byte, and every control character (tab, newline and DEL
// included), becomes \xNN. Pure; thread-safe.
std::string EscapeForTerminal(std::string_view s);

// Splits "host:port" / "[v6]:port" / ":port"; false if malformed or the port
// is not 0..65535. An empty host means all interfaces.
bool SplitHostPort(const std::string& address, std::string* host, int* port);

}  // namespace routestatus::cmd
