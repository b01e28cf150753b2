#include "kubeclient/rest/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include <glog/logging.h>
#include <nlohmann/json.hpp>

#include "kubeclient/rest/tls_material.h"
#include "kubeclient/rest/token_source.h"
#include "kubeclient/route.h"

extern char** environ;

namespace routestatus::kubeclient::rest {
namespace {

using nlohmann::json;

// Why 1 MiB: a credential is a few KiB (a certificate chain tens); more is
// a broken plugin, and reading it all would only grow memory.
constexpr size_t kMaxOutput = 1 << 20;
// After the plugin is killed, how long output already in the pipes is still
// read: a grandchild that left the process group keeps them open for ever.
constexpr std::chrono::milliseconds kDrainAfterKill(50);

Status Unauthorized(std::string m) { return Status(StatusCode::kUnauthorized, std::move(m)); }

// The last `n` bytes of `s`, for messages.
std::string Tail(const std::string& s, size_t n = 1024) {
  std::string t = s.size() > n ? "..." + s.substr(s.size() - n) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

// What one plugin run produced.
struct RunResult {
  int spawn_error = 0;  // errno of posix_spawn (ENOENT: not found)
  int exit_code = -1;   // -1 when killed by a signal, -2 unknown (SIGCHLD ignored)
  bool timed_out = false;
  bool cancelled = false;
  bool too_much_output = false;  // killed for printing more than kMaxOutput
  std::string out, err;
};

// Runs argv with `env`, stdin /dev/null, collecting stdout and stderr, in
// a process group of its own. Kills the group (the plugin and whatever it
// started: a shell wrapper's `aws`, `gcloud`) at `deadline` (on `clock`),
// when `cancel` is cancelled or when it prints more than kMaxOutput, and
// then stops reading; returns once the plugin exited and either its pipes
// closed or, after a kill, kDrainAfterKill passed.
RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const Clock& clock, SteadyTime deadline, const Cancellation* cancel) {
  RunResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.spawn_error = errno;
    return r;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.spawn_error = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Why: the controller blocks SIGTERM/SIGINT in every thread (sigwait);
  // the plugin must start with a clean mask and default dispositions.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  // Why a group: killing only the plugin's pid leaves its children holding
  // our pipes (and running) until they exit on their own.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  const bool search_path = argv[0].find('/') == std::string::npos;
  int rc = search_path ? posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), envp.data())
                       : posix_spawn(&pid, argv[0].c_str(), &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    r.spawn_error = rc;
    close(out_pipe[0]);
    close(err_pipe[0]);
    return r;
  }
  // Why the lock: the cancellation callback must never signal a reaped pid.
  std::mutex pid_mu;
  bool reaped = false;
  // Why the group while the leader is unreaped: its pid (= the group id)
  // cannot be reused before then.
  auto kill_child = [&] {
    std::lock_guard<std::mutex> l(pid_mu);
    if (!reaped) kill(-pid, SIGKILL);
  };
  Cancellation::Registration reg;
  if (cancel != nullptr) reg = const_cast<Cancellation*>(cancel)->OnCancel(kill_child);
  std::array<pollfd, 2> fds{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  std::string* sinks[2] = {&r.out, &r.err};
  char buf[16384];
  int open_fds = 2;
  std::optional<SteadyTime> killed_at;
  auto kill_now = [&] {
    kill_child();
    if (!killed_at) killed_at = clock.Now();
  };
  while (open_fds > 0) {
    SteadyTime now = clock.Now();
    if (now >= deadline && !r.timed_out) {
      r.timed_out = true;
      kill_now();
    }
    if (cancel != nullptr && cancel->cancelled()) kill_now();
    if (killed_at && now - *killed_at >= kDrainAfterKill) break;
    // Why slices: a fake clock's deadline is only noticed between polls.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    int wait_ms = static_cast<int>(std::clamp<int64_t>(left, 1, killed_at ? 10 : 100));
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        if (sinks[i]->size() + static_cast<size_t>(n) > kMaxOutput) {
          r.too_much_output = true;
          kill_now();
          continue;
        }
        sinks[i]->append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      close(fds[i].fd);
      fds[i].fd = -1;
      --open_fds;
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  bool status_known = true;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    status_known = false;  // ECHILD: SIGCHLD is ignored, the kernel reaped it
    break;
  }
  {
    std::lock_guard<std::mutex> l(pid_mu);
    reaped = true;
  }
  reg.Reset();
  r.cancelled = cancel != nullptr && cancel->cancelled();
  if (!status_known) {
    r.exit_code = -2;
  } else {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

// Our environment with exec.env on top (same names replaced) and
// KUBERNETES_EXEC_INFO.
std::vector<std::string> PluginEnvironment(const ExecConfig& exec, const std::string& exec_info) {
  std::vector<std::string> env;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  auto overridden = [&](const std::string& name) {
    if (name == "KUBERNETES_EXEC_INFO") return true;
    for (const auto& [n, v] : exec.env) {
      if (n == name) return true;
    }
    return false;
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    if (!overridden(name_of(entry))) env.push_back(std::move(entry));
  }
  for (const auto& [n, v] : exec.env) env.push_back(n + "=" + v);
  env.push_back("KUBERNETES_EXEC_INFO=" + exec_info);
  return env;
}

}  // namespace

std::string ClusterInfoJson(const RestConfig& cfg, const std::string& ca_pem) {
  json c = {{"server", cfg.server}};
  if (!cfg.tls_server_name.empty()) c["tls-server-name"] = cfg.tls_server_name;
  if (cfg.insecure_skip_tls_verify) c["insecure-skip-tls-verify"] = true;
  if (!ca_pem.empty()) c["certificate-authority-data"] = EncodeBase64(ca_pem);
  if (!cfg.proxy_url.empty()) c["proxy-url"] = cfg.proxy_url;
  if (cfg.disable_compression) c["disable-compression"] = true;
  if (!cfg.exec_extension_json.empty()) {
    c["config"] = json::parse(cfg.exec_extension_json, nullptr, false);
  }
  return c.dump();
}

namespace {

// What is wrong with a plugin's stdout that is not one JSON object, in
// words that quote none of it (it may hold a token).
std::string DescribeBadStdout(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "stdout is empty";
  try {
    json doc = json::parse(text);
    return std::string("stdout is a JSON ") + doc.type_name() + ", not one JSON object";
  } catch (const json::parse_error& e) {
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    // Why: a value that parses up to the error and then meets more text is
    // valid JSON followed by trailing data.
    if (at > first && at <= text.size() &&
        json::accept(text.substr(0, at))) {
      return "trailing data after the JSON object (" + std::to_string(text.size() - at) +
             " bytes after byte " + std::to_string(at) + " of " + std::to_string(text.size()) +
             ")";
    }
    if (at >= text.size()) {
      return "not one JSON object: it ends in the middle of a value (" +
             std::to_string(text.size()) + " bytes)";
    }
    return "not one JSON object: syntax error at byte " + std::to_string(at + 1) + " of " +
           std::to_string(text.size());
  }
}

}  // namespace

StatusOr<ExecCredential> ParseExecCredential(std::string_view text, const std::string& api_version) {
  auto invalid = [](const std::string& m) { return Status(StatusCode::kInvalid, m); };
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    // Why no excerpt: stdout is where the token is; never log it.
    return invalid("decoding stdout: " + DescribeBadStdout(text));
  }
  auto str = [&](const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string got_version = str(doc, "apiVersion");
  if (got_version != api_version) {
    return invalid("exec plugin is configured to use API version " + api_version +
                   ", plugin returned version " + (got_version.empty() ? "(none)" : got_version));
  }
  if (str(doc, "kind") != "ExecCredential") {
    return invalid("decoding stdout: kind is \"" + str(doc, "kind") + "\", not ExecCredential");
  }
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) {
    return invalid("exec plugin didn't return a status field");
  }
  ExecCredential cred;
  cred.token = str(*status, "token");
  cred.cert_pem = str(*status, "clientCertificateData");
  cred.key_pem = str(*status, "clientKeyData");
  if (cred.token.empty() && cred.cert_pem.empty() && cred.key_pem.empty()) {
    return invalid("exec plugin didn't return a token or cert/key pair");
  }
  if (Status s = CheckTokenBytes(cred.token, "the exec plugin"); !s.ok()) {
    return invalid(s.message());
  }
  if (cred.cert_pem.empty() != cred.key_pem.empty()) {
    return invalid("exec plugin returned only certificate or key, not both");
  }
  if (!cred.cert_pem.empty()) {
    if (Status s = CheckClientCertificate(cred.cert_pem, cred.key_pem); !s.ok()) {
      return invalid("failed parsing client key/certificate: " + s.message());
    }
  }
  std::string expiry = str(*status, "expirationTimestamp");
  if (!expiry.empty()) {
    std::optional<int64_t> secs = ParseRfc3339(expiry);
    if (!secs) return invalid("decoding stdout: bad expirationTimestamp \"" + expiry + "\"");
    cred.expiry = SystemTime(std::chrono::seconds(*secs));
  }
  return cred;
}

ExecCredentialProvider::ExecCredentialProvider(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

StatusOr<std::shared_ptr<const ExecCredential>> ExecCredentialProvider::Get() {
  std::lock_guard<std::mutex> l(mu_);
  if (cached_ && !(cached_->expiry && clock_.WallNow() >= *cached_->expiry)) return cached_;
  return RunLocked();
}

StatusOr<std::shared_ptr<const ExecCredential>> ExecCredentialProvider::Refresh(
    const std::shared_ptr<const ExecCredential>& used) {
  std::lock_guard<std::mutex> l(mu_);
  if (cached_ != used && cached_) return cached_;  // another caller already refreshed
  return RunLocked();
}

StatusOr<std::shared_ptr<const ExecCredential>> ExecCredentialProvider::RunLocked() {
  const ExecConfig& exec = options_.exec;
  auto report = [&](const char* result) {
    if (options_.on_run) options_.on_run(result);
  };
  if (options_.cancel != nullptr && options_.cancel->cancelled()) {
    return Status(StatusCode::kCancelled, "exec plugin " + exec.command + ": shutting down");
  }
  json info = {{"apiVersion", exec.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  if (exec.provide_cluster_info && !options_.cluster_json.empty()) {
    info["spec"]["cluster"] = json::parse(options_.cluster_json, nullptr, false);
  }
  std::vector<std::string> argv = {exec.command};
  argv.insert(argv.end(), exec.args.begin(), exec.args.end());
  RunResult r = Run(argv, PluginEnvironment(exec, info.dump()), clock_,
                    clock_.Now() + options_.timeout, options_.cancel);
  const std::string what = "exec plugin " + exec.command;
  if (r.spawn_error == ENOENT) {
    report("not_found");
    std::string m = "exec: executable " + exec.command + " not found";
    m += exec.install_hint.empty() ? " (kubeconfig users[].user.exec.command)"
                                   : ": " + exec.install_hint;
    return Unauthorized(m);
  }
  if (r.spawn_error != 0) {
    report("error");
    return Unauthorized(what + ": cannot run: " + std::strerror(r.spawn_error));
  }
  if (r.cancelled) {
    report("error");
    return Status(StatusCode::kCancelled, what + ": killed at shutdown");
  }
  if (r.timed_out) {
    report("error");
    return Unauthorized(what + ": killed after running " +
                        std::to_string(options_.timeout.count()) + " ms");
  }
  if (r.too_much_output) {
    report("error");
    return Unauthorized(what + ": killed for printing more than " +
                        std::to_string(kMaxOutput) + " bytes");
  }
  // Why -2 passes: with SIGCHLD ignored the exit status is unknown; the
  // output is checked all the same.
  if (r.exit_code != 0 && r.exit_code != -2) {
    report("error");
    std::string m = "exec: executable " + exec.command + " failed with exit code " +
                    std::to_string(r.exit_code);
    if (!r.err.empty()) m += ": " + Tail(r.err);
    return Unauthorized(m);
  }
  auto cred = ParseExecCredential(r.out, exec.api_version);
  if (!cred.ok()) {
    report("error");
    return Unauthorized(what + ": " + cred.status().message() +
                        (r.err.empty() ? "" : "; stderr: " + Tail(r.err)));
  }
  report("ok");
  if (!r.err.empty()) VLOG(1) << what << " stderr: " << Tail(r.err);
  VLOG(2) << what << ": new credential ("
          << (cred->token.empty() ? "client certificate" : "token")
          << (cred->expiry ? ", expires " + FormatRfc3339(std::chrono::duration_cast<std::chrono::seconds>(
                                                   cred->expiry->time_since_epoch())
                                                   .count())
                           : std::string(", no expiry"))
          << ")";
  cached_ = std::make_shared<const ExecCredential>(std::move(cred).value());
  return cached_;
}

}  // namespace routestatus::kubeclient::rest
