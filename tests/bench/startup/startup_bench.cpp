// startup_bench: start-up time of cheap commands, two `batchai` executables side by side in one
// run (issue 14 item 9: a control-plane command loads only what it uses). Each round runs every
// case once per executable, alternating, plus `sqlite3 :memory: 'select 1'` as the floor; prints
// the median wall time per case, its ratio to the floor, and new / old.
// Usage: startup_bench --old <batchai> --new <batchai> [--runs N] [--sqlite3 PATH]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Argv = std::vector<std::string>;

// Runs argv with stdin, stdout and stderr on /dev/null; returns the wall time in ms (negative
// when it could not be started) and its exit code.
double run_once(const Argv& argv, int* code) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd <= 2; ++fd) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1.0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  const auto t1 = std::chrono::steady_clock::now();
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

struct Case {
  std::string name;
  Argv args;  // after the executable
};

}  // namespace

int main(int argc, char** argv) {
  std::string old_exe, new_exe, sqlite3 = "sqlite3";
  int runs = 51;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--old") old_exe = value;
    else if (key == "--new") new_exe = value;
    else if (key == "--runs") runs = std::max(1, std::atoi(value.c_str()));
    else if (key == "--sqlite3") sqlite3 = value;
  }
  if (old_exe.empty() || new_exe.empty()) {
    std::fprintf(stderr, "usage: startup_bench --old <batchai> --new <batchai> [--runs N] [--sqlite3 PATH]\n");
    return 2;
  }
  // Each executable gets its own BATCHAI_HOME (their stores may differ in schema) with one group.
  char pattern[] = "/tmp/batchai-startup-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) return 1;
  const fs::path work = pattern;
  const std::map<std::string, std::string> exes = {{"old", old_exe}, {"new", new_exe}};
  const auto with_home = [&](const std::string& which, Argv args) {
    args.insert(args.begin(), {"env", "BATCHAI_HOME=" + (work / which).string(), "BATCHAI_SIM_DELAY_S=0",
                               exes.at(which)});
    return args;
  };
  int code = 0;
  for (const auto& [which, exe] : exes) {
    if (run_once(with_home(which, {"group", "create", "-n", "g", "-l", "eastus"}), &code) < 0 || code != 0) {
      std::fprintf(stderr, "%s: `group create` failed (exit %d)\n", exe.c_str(), code);
      return 1;
    }
  }
  const std::vector<Case> cases = {{"group list", {"group", "list"}},
                                   {"workspace show -g g -n w", {"workspace", "show", "-g", "g", "-n", "w"}},
                                   {"--help", {"--help"}}};
  const Argv floor_argv = {sqlite3, ":memory:", "select 1"};
  std::vector<double> floor_ms;
  std::map<std::string, std::map<std::string, std::vector<double>>> ms;  // case -> old/new -> times
  std::map<std::string, std::map<std::string, int>> codes;
  // `env` would add its own exec to every run: time the executables directly, BATCHAI_HOME set here.
  for (int round = 0; round < runs + 1; ++round) {
    const bool warm_up = round == 0;
    const double f = run_once(floor_argv, &code);
    if (f < 0) {
      std::fprintf(stderr, "cannot run %s\n", sqlite3.c_str());
      return 1;
    }
    if (!warm_up) floor_ms.push_back(f);
    for (const auto& c : cases) {
      // Alternate which executable goes first so that neither always follows the other.
      const std::vector<std::string> order = round % 2 ? std::vector<std::string>{"new", "old"}
                                                       : std::vector<std::string>{"old", "new"};
      for (const auto& which : order) {
        ::setenv("BATCHAI_HOME", (work / which).c_str(), 1);
        ::setenv("BATCHAI_SIM_DELAY_S", "0", 1);
        Argv a = c.args;
        a.insert(a.begin(), exes.at(which));
        const double t = run_once(a, &code);
        codes[c.name][which] = code;
        if (!warm_up) ms[c.name][which].push_back(t);
      }
    }
  }
  fs::remove_all(work);
  const double floor_median = median(floor_ms);
  std::printf("runs per figure: %d (medians, ms; x floor = median / sqlite3 median)\n", runs);
  std::printf("%-28s %9s %9s %9s %9s %9s\n", "command", "old ms", "new ms", "old x", "new x", "new/old");
  std::printf("%-28s %9.2f %9s %9s %9s %9s\n", "sqlite3 :memory: 'select 1'", floor_median, "", "", "", "");
  for (const auto& c : cases) {
    const double o = median(ms[c.name]["old"]), n = median(ms[c.name]["new"]);
    std::printf("%-28s %9.2f %9.2f %9.2f %9.2f %9.2f   (exit old %d, new %d)\n", c.name.c_str(), o, n,
                o / floor_median, n / floor_median, n / o, codes[c.name]["old"], codes[c.name]["new"]);
  }
  return 0;
}
