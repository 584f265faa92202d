// Many processes on one $BATCHAI_HOME: nothing lost, nothing duplicated, exactly one winner for
// a contested name, and a store that stays consistent when a writer is killed with SIGKILL.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;

// Runs `body` in `n` forked processes (each opens its own ControlPlane); returns exit codes.
template <typename F>
std::vector<int> run_processes(int n, const std::filesystem::path& home, F body) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int code = 0;
      try {
        Settings s;
        s.home = home;
        s.provisioning_delay = Micros(0);
        s.node_preparation_delay = Micros(0);
        auto cp = ControlPlane::open(s, Services{std::make_shared<SystemClock>(), make_posix_process_launcher()});
        code = body(*cp, i);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "process %d: %s\n", i, e.what());
        code = 100;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 200);
  }
  return codes;
}

TEST_F(ControlPlaneTest, FiftyProcessesCreateAndDeleteWithoutLoss) {
  auto ws = make_workspace();
  auto codes = run_processes(50, root_ / "home", [&](ControlPlane& cp, int i) {
    for (int k = 0; k < 4; ++k) cp.experiments().create(ws, "e" + std::to_string(i) + "_" + std::to_string(k));
    cp.experiments().create(ws, "shared");  // everyone: create-or-update, one row
    cp.experiments().remove(ws, "e" + std::to_string(i) + "_0");
    cp.workspaces().show(ws);
    return 0;
  });
  for (int c : codes) EXPECT_EQ(c, 0);
  Json list = cp_->experiments().list(ws);
  EXPECT_EQ(list.size(), 50u * 3 + 1);
  std::set<std::string> names;
  for (const auto& e : list) names.insert(e["name"].get<std::string>());
  EXPECT_EQ(names.size(), list.size());
  EXPECT_EQ(names.count("e7_0"), 0u);
  EXPECT_EQ(names.count("e7_3"), 1u);
}

TEST_F(ControlPlaneTest, ContestedClusterNameHasOneWinner) {
  auto ws = make_workspace();
  auto codes = run_processes(12, root_ / "home", [&](ControlPlane& cp, int) {
    ClusterCreateOptions o;
    o.where = ws;
    o.name = "same";
    o.vm_size = "Standard_NC6";
    o.target = 1;
    o.admin.user_name = "u";
    o.admin.password = "p";
    try {
      cp.clusters().create(o);
      cp.clusters().show(ws, "same");
      return 0;
    } catch (const AlreadyExists&) {
      return 1;
    }
  });
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 0), 1);
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 1), 11);
  EXPECT_EQ(cp_->clusters().list(ws).size(), 1u);
  EXPECT_EQ(cp_->clusters().show(ws, "same")["currentNodeCount"], 1);
  EXPECT_EQ(cp_->nodes().list(ws, "same").size(), 1u);
}

TEST_F(ControlPlaneTest, SigkillDuringWritesLeavesConsistentStore) {
  auto ws = make_workspace();
  for (int round = 0; round < 3; ++round) {
    pid_t pid = ::fork();
    if (pid == 0) {
      Settings s;
      s.home = root_ / "home";
      s.provisioning_delay = Micros(0);
      s.node_preparation_delay = Micros(0);
      auto cp = ControlPlane::open(s, Services{std::make_shared<SystemClock>(), make_posix_process_launcher()});
      for (int k = 0;; ++k) {
        std::string n = "r" + std::to_string(round) + "_" + std::to_string(k);
        cp->experiments().create(ws, n);
        ClusterCreateOptions o;
        o.where = ws;
        o.name = n;
        o.vm_size = "Standard_D1";
        o.target = 2;
        o.admin.user_name = "u";
        o.admin.password = "p";
        cp->clusters().create(o);
        cp->clusters().show(ws, n);
        cp->clusters().remove(ws, n);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 70 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  open(Micros(0));  // a fresh connection, as the next command would
  // The killed writers stamped their rows with the system clock: look at the store after them.
  clock_->set(SystemClock().now() + std::chrono::seconds(1));
  auto st = cp_->store().prepare("PRAGMA integrity_check");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "ok");
  auto fk = cp_->store().prepare("PRAGMA foreign_key_check");
  EXPECT_FALSE(fk.step());
  Json experiments = cp_->experiments().list(ws);
  EXPECT_GT(experiments.size(), 0u);
  // Every surviving cluster reconciles to a consistent state with its node folders.
  for (const auto& c : cp_->clusters().list(ws)) {
    Json shown = cp_->clusters().show(ws, c["name"]);
    EXPECT_EQ(shown["currentNodeCount"], 2) << shown.dump();
    for (const auto& n : cp_->nodes().list(ws, c["name"]))
      EXPECT_TRUE(std::filesystem::exists(cp_->layout().node("rg", "ws", c["name"], n["nodeId"]) / "mounts"));
  }
  // The workspace and its contents can still be deleted cleanly.
  cp_->workspaces().remove(ws);
  EXPECT_FALSE(std::filesystem::exists(root_ / "home" / "clusters" / "rg" / "ws"));
}

}  // namespace
}  // namespace batchai::control_plane
