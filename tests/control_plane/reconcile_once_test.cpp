// One command reconciles once: every service entry point brings the simulation up to now()
// exactly one time, and services reach each other through rows, never through another entry
// point (which would reconcile again). Job supervisors are not started: a launcher that only
// records detached spawns stands in, so the jobs stay queued.

#include "fixture.hpp"

namespace batchai::control_plane::testing {
namespace {

class NoSupervisorLauncher final : public ProcessLauncher {
 public:
  pid_t spawn(const ProcessSpec&) override { throw SystemError("no processes in this test"); }
  std::optional<ProcessExit> wait(pid_t, std::optional<std::chrono::milliseconds>) override { return std::nullopt; }
  bool signal_group(pid_t, int) override { return false; }
  pid_t spawn_detached(const ProcessSpec&) override { return ++spawned; }
  int spawned = 0;
};

class ReconcileOnce : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    launcher_ = fake_;
    open(Micros(0));
  }
  // How many reconciles `fn` ran.
  template <typename F>
  std::uint64_t reconciles(F&& fn) {
    const std::uint64_t before = cp_->reconcile_count();
    fn();
    return cp_->reconcile_count() - before;
  }
  std::shared_ptr<NoSupervisorLauncher> fake_ = std::make_shared<NoSupervisorLauncher>();
};

TEST_F(ReconcileOnce, ResourceCommands) {
  const WorkspaceRef ws = make_workspace();
  cp_->experiments().create(ws, "exp");
  cp_->file_servers().create(file_server_options("nfs"));
  EXPECT_EQ(reconciles([&] { cp_->groups().show("rg"); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->groups().list(); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->workspaces().show(ws); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->experiments().show(ws, "exp"); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->file_servers().show(ws, "nfs"); }), 1u);
  auto o = cluster_options("c", 1);
  o.mounts.nfs = "nfs";  // create reads the file server's row, not `file-server show`
  EXPECT_EQ(reconciles([&] { cp_->clusters().create(o); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->clusters().show(ws, "c"); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->clusters().list(ws); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->clusters().resize(ws, "c", 2); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->clusters().auto_scale(ws, "c", 1, 3); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->nodes().list(ws, "c"); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->clusters().list_usages("eastus"); }), 1u);
}

TEST_F(ReconcileOnce, JobCommands) {
  const WorkspaceRef ws = make_workspace();
  cp_->experiments().create(ws, "exp");
  cp_->clusters().create(cluster_options("c", 0));
  const JobCreateOptions o = custom_job_options("j", "c");
  EXPECT_EQ(reconciles([&] { cp_->jobs().create(o); }), 1u);
  EXPECT_EQ(fake_->spawned, 1);
  const JobRef job{ws, "exp", "j"};
  EXPECT_EQ(reconciles([&] { cp_->jobs().show(job); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->jobs().list(ws, "exp"); }), 1u);
  EXPECT_EQ(reconciles([&] { cp_->jobs().terminate(job); }), 1u);
  EXPECT_EQ(cp_->jobs().show(job)["executionState"], "failed");
  EXPECT_EQ(reconciles([&] { cp_->jobs().remove(job); }), 1u);
  EXPECT_THROW(cp_->jobs().show(job), NotFound);
}

}  // namespace
}  // namespace batchai::control_plane::testing
