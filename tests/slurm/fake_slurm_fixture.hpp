// The control plane over the stand-in Slurm (fake_slurm.hpp) that the tests without a Slurm share:
// workspace ws_ with experiment "exp" and a cluster "sc" (target 2) on partition "batchai".
#pragma once
#include <stdlib.h>

#include <memory>
#include <string>

#include "control_plane/fixture.hpp"
#include "fake_slurm.hpp"

namespace batchai::control_plane::testing {

class FakeSlurmTest : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    ::setenv("SLURM_CONF", "/nonexistent/fake-slurm.conf", 1);  // the back-off's key; the fake reads nothing
    slurm_ = std::make_shared<slurm_testing::FakeSlurm>();
    launcher_ = slurm_;
    open(Micros(0));
    ws_ = make_workspace();
    cp_->experiments().create(ws_, "exp");
    ClusterCreateOptions o = cluster_options("sc", 2);
    o.slurm_partition = "batchai";
    cp_->clusters().create(o);
  }
  void TearDown() override {
    ControlPlaneTest::TearDown();
    ::unsetenv("SLURM_CONF");
  }
  Json show(const std::string& name) { return cp_->jobs().show({ws_, "exp", name}); }
  std::string job_key(const std::string& name) {
    return cp_->store().read([&] {
      auto st = cp_->store().prepare("SELECT job_key FROM jobs WHERE name = ?");
      st.bind(1, name);
      return st.step() ? st.text(0) : std::string();
    });
  }

  std::shared_ptr<slurm_testing::FakeSlurm> slurm_;
  WorkspaceRef ws_;
};

}  // namespace batchai::control_plane::testing
