#include "e2e/harness/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <glog/logging.h>

namespace routestatus::e2e {

Subprocess::Subprocess(std::vector<std::string> argv, const std::string& log_path,
                       const std::map<std::string, std::string>& env)
    : log_path_(log_path) {
  CHECK(!argv.empty());
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  CHECK(fd >= 0) << "cannot open " << log_path;
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  // The child's environment: ours, with `env` set over it.
  std::vector<std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string var(*e);
    if (env.count(var.substr(0, var.find('='))) == 0) vars.push_back(std::move(var));
  }
  for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  // Why posix_spawn, not fork: glibc spawns with CLONE_VM | CLONE_VFORK, so
  // the parent's memory is never marked copy-on-write. A benchmark whose
  // process holds an embedded API server with 100,000 routes paid a write
  // fault on every page it touched after each fork (the first second of
  // the scale restart went to the server's snapshot faulting its objects
  // back in), which a real API server never pays.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Why its own process group: killing the group never reaches the test.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(fd);
  if (rc != 0) {
    // As a failed exec in the child did: the process "exited" with 127.
    LOG(ERROR) << "cannot start " << argv[0] << ": " << std::strerror(rc);
    pid_ = -1;
    exit_code_ = 127;
    return;
  }
  pid_ = pid;
}

Subprocess::~Subprocess() {
  if (Running()) {
    kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(5));
  }
}

bool Subprocess::Running() {
  if (pid_ <= 0 || exit_code_ >= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } else {
    exit_code_ = 255;
  }
  return false;
}

void Subprocess::Signal(int signal) {
  if (Running()) kill(pid_, signal);
}

int Subprocess::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit_code_;
}

int Subprocess::Stop(std::chrono::milliseconds grace) {
  Signal(SIGTERM);
  int code = Wait(grace);
  if (code < 0) {
    Signal(SIGKILL);
    code = Wait(std::chrono::seconds(5));
  }
  return code;
}

std::string Subprocess::ReadLog() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Subprocess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadLog().find(needle) != std::string::npos) return true;
    if (!Running()) return ReadLog().find(needle) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int PickFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  CHECK(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  CHECK(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string FindExecutable(const std::string& name, const char* env_var) {
  auto executable = [](const std::string& path) { return access(path.c_str(), X_OK) == 0; };
  if (const char* env = std::getenv(env_var); env != nullptr && *env) {
    return executable(env) ? env : "";
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
  }
  return "";
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix +
                        "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  CHECK(mkdtemp(buf.data()) != nullptr) << "mkdtemp " << pattern;
  return std::string(buf.data());
}

ProcStats ReadProcStats(pid_t pid) {
  ProcStats stats;
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat_file, line)) return stats;
  // Why: the command name (field 2) may hold spaces; fields restart after ')'.
  size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return stats;
  std::istringstream rest(line.substr(close_paren + 2));
  std::vector<std::string> fields;
  std::string field;
  while (rest >> field) fields.push_back(field);
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  if (fields.size() < 13) return stats;
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  stats.cpu_seconds = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
  std::ifstream status_file("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status_file, line)) {
    if (line.rfind("VmHWM:", 0) == 0) stats.vm_hwm_kb = std::atol(line.c_str() + 6);
    if (line.rfind("VmRSS:", 0) == 0) stats.vm_rss_kb = std::atol(line.c_str() + 6);
  }
  stats.ok = true;
  return stats;
}

}  // namespace routestatus::e2e
