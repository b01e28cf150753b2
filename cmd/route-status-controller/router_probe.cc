#include "cmd/route-status-controller/router_probe.h"

#include <memory>

#include "kubeclient/rest/http_wire.h"
#include "kubeclient/rest/socket_watch.h"

namespace routestatus::cmd {

StatusOr<RouterProbe> HttpRouterProbe(const std::string& url, const Clock& clock) {
  auto parsed = kubeclient::rest::ParseServerUrl(url);
  if (!parsed.ok()) return parsed.status();
  kubeclient::rest::SocketTarget target;
  target.server = *parsed;
  // Why unverified: the router's readiness endpoint is in the same pod,
  // reached on loopback; its certificate (if any) names the router's hosts.
  target.verify = false;
  const std::string host = "Host: " + parsed->Authority(!parsed->default_port) +
                           "\r\nUser-Agent: route-status-controller (router readiness)\r\n";
  const Clock* c = &clock;
  // Why: the URL's path is the target's prefix, which SocketGet puts first.
  const std::string path = parsed->path_prefix.empty() ? "/" : "";
  return RouterProbe([target, host, c, path](SteadyTime deadline) -> Status {
    kubeclient::rest::SocketGetRequest req;
    req.path = path;
    req.headers = host;
    req.connect_deadline = deadline;
    req.head_deadline = deadline;
    kubeclient::rest::SocketGetStage stage;
    auto got = kubeclient::rest::SocketGet(target, *c, req,
                                           std::make_shared<kubeclient::rest::Wake>(), &stage);
    if (!got.ok()) return got.status();
    const int code = got->head.status;
    if (code >= 200 && code < 300) return Status::Ok();
    return Status(StatusCode::kUnavailable, "HTTP " + std::to_string(code));
  });
}

}  // namespace routestatus::cmd
