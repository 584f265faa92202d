// The jobs harness: temp BATCHAI_HOME, executable runner, /proc scans.
#include "job_harness.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;

namespace batchai::test {

void JobsFixture::SetUp() {
  ::setenv("BATCHAI_HOME", home_.c_str(), 1);
  ::setenv("BATCHAI_SIM_DELAY_S", "0", 1);
  ::unsetenv("AZURE_DEFAULTS_GROUP");
  marker_ = "bjmark" + std::to_string(::getpid()) + work_.filename().string().substr(13);
  ASSERT_EQ(run("group create -n rg -l eastus").code, 0);
  ASSERT_EQ(run("batchai workspace create -g rg -n ws -l eastus").code, 0);
  ASSERT_EQ(run("batchai experiment create -g rg -w ws -n exp1").code, 0);
  scope_ = "-g rg -w ws -e exp1";
}

void JobsFixture::TearDown() {
  // Whatever a failed test left running goes with its workspace.
  run("batchai workspace delete -g rg -n ws -y");
}

Result JobsFixture::run(const std::string& args) {
  static int counter = 0;
  const fs::path out = work_ / ("out" + std::to_string(counter));
  const fs::path err = work_ / ("err" + std::to_string(counter++));
  std::string cmd = std::string(BATCHAI_EXE) + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

Json JobsFixture::json(const std::string& args) {
  Result r = run(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  if (r.code != 0 || r.out.empty()) return nullptr;
  return Json::parse(r.out);
}

void JobsFixture::make_cluster(const std::string& name, int nodes) {
  Result r = run("batchai cluster create -g rg -w ws -n " + name + " -s Standard_D1 -t " + std::to_string(nodes) +
                 " -u tester -p Secret.123");
  ASSERT_EQ(r.code, 0) << r.err;
}

std::string JobsFixture::job_file(const std::string& name, const Json& props) {
  fs::path p = work_ / (name + ".json");
  std::ofstream(p) << Json{{"properties", props}}.dump(2);
  return p.string();
}

Json JobsFixture::create(const std::string& name, const Json& props, const std::string& cluster) {
  return json("batchai job create " + scope_ + " -n " + name + " -c " + cluster + " -f " + job_file(name, props));
}

Json JobsFixture::show(const std::string& name) { return json("batchai job show " + scope_ + " -n " + name); }

Json JobsFixture::wait_state(const std::string& name, const std::vector<std::string>& states, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  Json job;
  for (;;) {
    job = show(name);
    if (job.is_null()) return job;
    for (const auto& s : states)
      if (job["executionState"] == s) return job;
    if (std::chrono::steady_clock::now() > end) {
      ADD_FAILURE() << "job " << name << " stayed " << job["executionState"];
      return job;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

fs::path JobsFixture::output_file(const std::string& job, const std::string& name, const std::string& dir) {
  Json files = json("batchai job file list " + scope_ + " -j " + job + " -d " + dir);
  for (const auto& f : files)
    if (f["name"] == name) return f["downloadUrl"].get<std::string>().substr(7);  // strip file://
  ADD_FAILURE() << "no " << name << " in " << files.dump();
  return {};
}

fs::path stdouterr_file(const fs::path& home, const std::string& job, const std::string& name) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(home, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() == name && p.parent_path().filename() == "stdouterr" &&
        p.parent_path().parent_path().parent_path().filename() == job &&
        p.parent_path().parent_path().parent_path().parent_path().filename() == "jobs")
      return p;
  }
  ADD_FAILURE() << "no " << name << " of job " << job << " under " << home;
  return {};
}

int count_processes(const std::string& text) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(pid) == ::getpid()) continue;
    std::string cmd = read_file(e.path() / "cmdline");
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(text) != std::string::npos) ++n;
  }
  return n;
}

bool no_processes_within(const std::string& text, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (count_processes(text) > 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

namespace {

// Whether some process holds `lock` (a lock file of the supervisors).
bool lock_held(const fs::path& lock) {
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

}  // namespace

int held_supervisor_locks(const fs::path& home) {
  int held = 0;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(home / "jobs", ec)) held += lock_held(dir.path() / "supervisor.lock") ? 1 : 0;
  return held;
}

std::map<std::string, std::string> supervisor_pids(const fs::path& home) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(home / "jobs", ec)) {
    std::ifstream in(dir.path() / "supervisor.lock");
    std::string pid;
    if (std::getline(in, pid) && !pid.empty()) out[dir.path().filename().string()] = pid;
  }
  return out;
}

bool a_waiting_place_is_held(const fs::path& home) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(home / "supervisors", ec))
    if (entry.path().extension() == ".lock" && lock_held(entry.path())) return true;
  return false;
}

}  // namespace batchai::test
