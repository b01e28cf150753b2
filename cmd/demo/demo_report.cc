#include "cmd/demo/demo_report.h"

#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>

namespace routestatus::demo {
namespace {

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

}  // namespace

void PrintReport(const DemoFacts& facts, std::ostream& out) {
  namespace bench = e2e::bench;
  // Admission as the routes show it (not as the controller says it is).
  std::map<std::string, int> rejected;
  int admitted = 0, in_shard = 0, other_shard = 0, missing = 0, stray = 0;
  for (const auto& route : facts.routes) {
    bool ours = !bench::IsInternalShard(route, facts.internal_namespaces);
    bench::EntryView entry = bench::FindEntry(route, facts.router_name);
    if (!ours) {
      ++other_shard;
      if (entry.present) ++stray;
      continue;
    }
    ++in_shard;
    if (!entry.present) {
      ++missing;
    } else if (entry.admitted == "True") {
      ++admitted;
    } else {
      ++rejected[entry.reason.empty() ? "(no reason)" : entry.reason];
    }
  }
  const int n = static_cast<int>(facts.replicas.size());

  out << "\n";
  out << Format("routestatus demo: %d replicas of router \"%s\" on the embedded API server\n", n,
                facts.router_name.c_str());
  // Why: the host changes run only once the start-up converged.
  const bool startup_converged = facts.changes > 0 || facts.converged;
  out << Format("  %s %.1f s after the replicas started",
                startup_converged ? "converged" : "NOT converged", facts.converge_seconds);
  if (facts.changes > 0) {
    out << Format("; %d host changes %s %.1f s after they were made",
                  facts.changes, facts.converged ? "converged" : "NOT converged",
                  facts.changes_converge_seconds);
  }
  out << "\n";
  out << "  route-status-controller " << facts.controller_flags << "\n\n";
  out << Format("Routes: %zu in %d namespaces; %d in shard \"%s\", %d in shard \"internal\" "
                "(excluded by --route-labels/--namespace-labels)\n\n",
                facts.routes.size(), facts.namespaces, in_shard, facts.router_name.c_str(),
                other_shard);

  out << "  Admission (status.ingress[routerName=" << facts.router_name << "])   routes\n";
  out << Format("    %-38s %5d\n", "Admitted", admitted);
  for (const auto& [reason, count] : rejected) {
    out << Format("    %-38s %5d\n", ("Rejected: " + reason).c_str(), count);
  }
  if (missing > 0) out << Format("    %-38s %5d\n", "(no entry yet)", missing);
  out << Format("    %-38s %5d%s\n", "Other shard: no entry of ours", other_shard - stray,
                stray > 0 ? Format("  (%d with a stray entry!)", stray).c_str() : "");
  out << "\n";

  out << "Status writes (PUT .../routes/NAME/status)\n";
  out << Format("  %-9s %7s  %-9s %8s %10s %7s   %s\n", "replica", "pid", "lease", "written",
                "conflicts", "errors", "metrics");
  bench::ReplicaWrites total;
  for (const ReplicaFacts& r : facts.replicas) {
    out << Format("  #%-8d %7d  %-9s %8.0f %10.0f %7.0f   %s\n", r.index,
                  static_cast<int>(r.pid), r.lease_state.c_str(), r.writes.success,
                  r.writes.conflict, r.writes.other, r.metrics_url.c_str());
    total.success += r.writes.success;
    total.conflict += r.writes.conflict;
    total.other += r.writes.other;
  }
  out << Format("  %-28s %8.0f %10.0f %7.0f\n", "total (replicas' metrics)", total.success,
                total.conflict, total.other);
  const bench::ServerWrites& s = facts.server_writes;
  out << Format("  %-28s %8.0f %10.0f %7.0f   apiserver_request_total\n", "counted by the server",
                s.status_ok, s.status_conflict, s.status_other);
  out << "\n";
  out << Format("  %-38s %22s %32s\n", "status PUTs counted by the server",
                Format("start-up (%d entries)", in_shard).c_str(),
                Format("%d host changes", facts.changes).c_str());
  auto row = [&](const char* what, double startup, double changes, int entries_changed) {
    std::string per_change =
        changes < 0 ? std::string("not converged")
                    : Format("%.0f for %d entries (%.2f each)", changes, entries_changed,
                             entries_changed > 0 ? changes / entries_changed : 0.0);
    out << Format("  %-38s %22.0f %32s\n", what, startup, per_change.c_str());
  };
  row("this controller (write lease)", facts.startup_puts, facts.change_puts,
      facts.entries_changed);
  const NaiveFacts& naive = facts.naive;
  if (naive.measured) {
    row(("naive, measured (" + naive.flags + ")").c_str(), naive.startup_puts, naive.change_puts,
        naive.entries_changed);
  } else {
    out << Format("  %-38s %22s %32s\n", "naive (not measured: --no-naive)", "-", "-");
  }
  out << "  (naive: the same routes and changes on their own API server, " << n
      << " replicas that\n   each write whenever their cache differs; a changed host frees the "
         "old one,\n   which can admit a route that waited for it: more entries than changes)\n\n";

  PrintPrometheus(facts.prometheus, out);
  out << "Look around\n";
  out << "  kubectl --kubeconfig " << facts.kubeconfig << " get routes -A\n";
  const std::string our = "?(@.routerName==\"" + facts.router_name + "\")";
  out << "  kubectl --kubeconfig " << facts.kubeconfig << " get routes -A -o custom-columns="
      << "'NAMESPACE:.metadata.namespace,NAME:.metadata.name,HOST:.status.ingress[" << our
      << "].host,ADMITTED:.status.ingress[" << our
      << "].conditions[?(@.type==\"Admitted\")].status,REASON:.status.ingress[" << our
      << "].conditions[?(@.type==\"Admitted\")].reason'\n";
  out << "  API server " << facts.server_url << " (pid " << facts.server_pid
      << "), its metrics: " << facts.server_url << "/metrics\n";
  for (const ReplicaFacts& r : facts.replicas) {
    out << "  replica #" << r.index << " metrics: " << r.metrics_url << "\n";
  }
  out << "  logs: " << facts.dir << "/\n" << std::flush;
}

}  // namespace routestatus::demo
