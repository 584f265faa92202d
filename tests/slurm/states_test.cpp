// Every row of docs/slurm.md's state tables.
#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/states.hpp"

namespace batchai::slurm {
namespace {

TEST(SlurmNodeState, BaseStates) {
  EXPECT_EQ(map_node_state("idle"), NodeState::idle);
  EXPECT_EQ(map_node_state("planned"), NodeState::idle);
  for (auto s : {"allocated", "mixed", "completing"}) EXPECT_EQ(map_node_state(s), NodeState::running) << s;
  for (auto s : {"powering_up", "booting"}) EXPECT_EQ(map_node_state(s), NodeState::preparing) << s;
  for (auto s : {"down", "drained", "draining", "drain", "fail", "failing", "maint", "reserved", "future", "unknown",
                 "inval", "powered_down", "not_responding", "", "something_new"})
    EXPECT_EQ(map_node_state(s), NodeState::unusable) << s;
}

TEST(SlurmNodeState, TrailingFlags) {
  for (auto s : {"idle*", "mixed*", "allocated~", "idle!", "idle%", "idle$", "down*", "drained*"})
    EXPECT_EQ(map_node_state(s), NodeState::unusable) << s;
  for (auto s : {"idle#", "idle^", "mixed#"}) EXPECT_EQ(map_node_state(s), NodeState::preparing) << s;
  EXPECT_EQ(map_node_state("idle@"), NodeState::idle);
  EXPECT_EQ(map_node_state("mixed-"), NodeState::running);
  EXPECT_EQ(map_node_state("allocated+"), NodeState::running);
  EXPECT_EQ(map_node_state("down#"), NodeState::unusable);  // unusable wins over preparing
  EXPECT_EQ(map_node_state("idle*#"), NodeState::unusable);
  EXPECT_EQ(map_node_state("*"), NodeState::unusable);
}

TEST(SlurmJobState, QueuedAndRunning) {
  for (auto s : {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})
    EXPECT_EQ(map_job_state(s).state, JobState::queued) << s;
  for (auto s :
       {"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"}) {
    EXPECT_EQ(map_job_state(s).state, JobState::running) << s;
    EXPECT_FALSE(is_final_job_state(s)) << s;
  }
  auto ok = map_job_state("COMPLETED", 0);
  EXPECT_EQ(ok.state, JobState::succeeded);
  EXPECT_TRUE(ok.error_code.empty());
}

TEST(SlurmJobState, FailedWithReasons) {
  struct Row {
    const char* slurm;
    const char* code;
  } rows[] = {{"FAILED", "JobFailed"},           {"SPECIAL_EXIT", "JobFailed"},     {"TIMEOUT", "JobTimedOut"},
              {"NODE_FAIL", "NodeFailed"},       {"OUT_OF_MEMORY", "OutOfMemory"},  {"BOOT_FAIL", "NodeBootFailed"},
              {"DEADLINE", "DeadlineExceeded"}, {"PREEMPTED", "JobPreempted"},     {"CANCELLED", "JobTerminated"},
              {"REVOKED", "JobRevoked"}};
  for (const auto& r : rows) {
    auto o = map_job_state(r.slurm, 3);
    EXPECT_EQ(o.state, JobState::failed) << r.slurm;
    EXPECT_EQ(o.error_code, r.code) << r.slurm;
    EXPECT_FALSE(o.error_message.empty());
    EXPECT_TRUE(is_final_job_state(r.slurm)) << r.slurm;
  }
  EXPECT_NE(map_job_state("FAILED", 3).error_message.find("exit code 3"), std::string::npos);
  EXPECT_NE(map_job_state("CANCELLED").error_message.find("terminated"), std::string::npos);
  EXPECT_EQ(map_job_state("CANCELLED by 0").error_code, "JobTerminated");
  EXPECT_TRUE(is_final_job_state("CANCELLED by 0"));
}

TEST(SlurmJobState, UnknownStateIsRefused) {
  EXPECT_THROW(map_job_state("EXPLODED"), SystemError);
  EXPECT_THROW(map_job_state(""), SystemError);
  EXPECT_THROW(map_job_state("running"), SystemError);  // Slurm prints job states in upper case
}

TEST(SlurmStates, Names) {
  EXPECT_EQ(to_string(NodeState::unusable), "unusable");
  EXPECT_EQ(to_string(JobState::succeeded), "succeeded");
}

}  // namespace
}  // namespace batchai::slurm
