#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace routestatus::e2e {

// A child process started with fork/exec whose stdout and stderr go to a
// log file. The destructor kills (SIGKILL) and reaps it if still running.
// Not thread-safe: one owner.
class Subprocess {
 public:
  // Starts `argv[0]` with `argv` and the parent's environment plus `env`.
  // Dies (CHECK) if fork fails; an exec failure shows as exit code 127.
  Subprocess(std::vector<std::string> argv, const std::string& log_path,
             const std::map<std::string, std::string>& env = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  // True while the child has not exited (reaps it when it has).
  bool Running();
  // Sends `signal` if running.
  void Signal(int signal);
  // Waits up to `timeout` for exit; returns the exit code (128+signal when
  // killed) or -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit code.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  // The whole log so far.
  std::string ReadLog() const;
  // Waits until the log contains `needle`; false on timeout or exit.
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string log_path_;
};

// The program a test runs: the executable named by environment variable
// `env_var` when it is set (even a wrong one: "" then, so the mistake shows),
// else `name` in $PATH; "" when there is none.
std::string FindExecutable(const std::string& name, const char* env_var);

// A TCP port on 127.0.0.1 that was free a moment ago.
int PickFreePort();

// A fresh folder under $TMPDIR (or /tmp) named prefix-XXXXXX. Dies on failure.
std::string MakeTempDir(const std::string& prefix);

// CPU time and memory of a process, from /proc/PID/stat and /proc/PID/status.
struct ProcStats {
  double cpu_seconds = 0;  // utime + stime
  long vm_hwm_kb = 0;      // peak resident set
  long vm_rss_kb = 0;      // current resident set
  bool ok = false;
};
ProcStats ReadProcStats(pid_t pid);

}  // namespace routestatus::e2e
