#include "e2e/bench/provenance.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e/bench/svg_plot.h"
#include "e2e/bench/table.h"

namespace routestatus::e2e::bench {
namespace {

// The first line a shell command prints, without its newline; "" on failure.
std::string FirstLineOf(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buf[256];
    if (fgets(buf, sizeof buf, pipe) != nullptr) out = buf;
    pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string Commit() {
  const std::string git = "git -C '" + std::string(ROUTESTATUS_SOURCE_DIR) + "' ";
  std::string commit = FirstLineOf(git + "rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown (not a git checkout)";
  if (!FirstLineOf(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) {
    commit += " + uncommitted changes";
  }
  return commit;
}

std::string Machine() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  double mem_gib = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemTotal:", 0) == 0) {
      mem_gib = std::stod(line.substr(9)) / (1024.0 * 1024.0);
      break;
    }
  }
  return Fmt("%u cores (%s), %.1f GiB", std::thread::hardware_concurrency(), model.c_str(),
             mem_gib);
}

}  // namespace

std::string Provenance(const std::vector<std::string>& command_line, const std::string& benchmark,
                       const std::string& load_before) {
  std::string command;
  for (const std::string& arg : command_line) command += (command.empty() ? "" : " ") + arg;
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return Fmt(
      "Benchmark `%s`, run as `%s` on %s at commit %s. Machine: %s. Load average (1/5/15 min) "
      "at the start: %s. The controller's flags are the product's defaults plus what each "
      "table's rows or notes name.\n",
      benchmark.c_str(), command.c_str(), when, Commit().c_str(), Machine().c_str(),
      load_before.c_str());
}

bool WriteResultMarkdown(const BenchOptions& options, const std::string& file,
                         const std::string& tables) {
  return WriteTextFile(options.results_dir + "/" + file,
                       "<!-- Written by routestatus-bench (make bench): edits are overwritten. -->\n\n" +
                           options.provenance + "Load average at the end: " + LoadAverage() +
                           ".\n\n" + tables);
}

}  // namespace routestatus::e2e::bench
