// The parsers of Slurm's output, with the lines this project's Slurm (22.05) printed, and their
// refusals of output that does not fit.
#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "batchai/slurm/parsers.hpp"

namespace batchai::slurm {
namespace {

TEST(SlurmParseSinfo, Nodes) {
  auto nodes = parse_sinfo_nodes(
      "node1|idle|2|2048|127.0.0.1|(null)\nnode2|mixed|2|2048|gpu-02.cluster.example|gpu:a100:4(S:0-1),nvme:1\n"
      "node3|down*|4|1024|fd00::2|gpu:2\n\n");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "node1");
  EXPECT_EQ(nodes[0].state, NodeState::idle);
  EXPECT_EQ(nodes[0].address, "127.0.0.1");
  EXPECT_EQ(nodes[1].state, NodeState::running);
  EXPECT_EQ(nodes[1].address, "gpu-02.cluster.example");
  EXPECT_EQ(nodes[2].slurm_state, "down*");
  EXPECT_EQ(nodes[2].state, NodeState::unusable);
  EXPECT_EQ(nodes[2].cpus, 4);
  EXPECT_EQ(nodes[2].memory_mb, 1024);
  EXPECT_EQ(nodes[2].address, "fd00::2");
  EXPECT_EQ(nodes[0].gpus, 0);
  EXPECT_EQ(nodes[1].gpus, 4);
  EXPECT_EQ(nodes[2].gpus, 2);
  EXPECT_EQ(parse_sinfo_nodes("node1|idle|2|2048|" + std::string(255, 'a') + "|(null)")[0].address.size(), 255u);
  EXPECT_TRUE(parse_sinfo_nodes("").empty());
}

TEST(SlurmParseSinfo, Refusals) {
  EXPECT_THROW(parse_sinfo_nodes("node1 idle 2 2048 10.0.0.1"), SystemError);  // not the machine format
  EXPECT_THROW(parse_sinfo_nodes("node1|idle|2"), SystemError);                 // fields missing
  EXPECT_THROW(parse_sinfo_nodes("node1|idle|-2|2048|10.0.0.1|gpu:1"), SystemError);  // negative count
  EXPECT_THROW(parse_sinfo_nodes("node1|idle|2|99999999999999|10.0.0.1|gpu:1"), SystemError);  // beyond bound
  EXPECT_THROW(parse_sinfo_nodes("no/de|idle|2|2048|10.0.0.1|gpu:1"), SystemError);   // name with '/'
  EXPECT_THROW(parse_sinfo_nodes("node1|IDLE;rm|2|2048|10.0.0.1|gpu:1"), SystemError);  // state outside its alphabet
  EXPECT_THROW(parse_sinfo_nodes("|idle|2|2048|10.0.0.1|gpu:1"), SystemError);
  EXPECT_THROW(parse_sinfo_nodes(std::string(70000, 'a') + "|idle|2|2048|10.0.0.1|gpu:1"), SystemError);
}

TEST(SlurmParseSinfo, BadAddressIsRefused) {
  for (const std::string& bad : {std::string(), std::string(256, 'a'), std::string("10.0.0.1 -oProxyCommand=x"),
                                 std::string("host;rm"), std::string("a/b"), std::string("$(id)"),
                                 std::string("h\tx"), std::string("10.0.0.1|extra"), std::string("host_1"),
                                 std::string("-v")})
    EXPECT_THROW(parse_sinfo_nodes("node1|idle|2|2048|" + bad + "|(null)"), SystemError) << bad;
}

// The formats before NodeAddr (4 fields) and GRES (5 fields) were read are refused, not read
// with values made up: the client asks for all 6 fields, so such a line means something else printed it.
TEST(SlurmParseSinfo, LinesOfOlderFormatsAreRefused) {
  EXPECT_THROW(parse_sinfo_nodes("node1|idle|2|2048"), SystemError);
  EXPECT_THROW(parse_sinfo_nodes("node1|idle|2|2048|10.0.0.1"), SystemError);
  EXPECT_THROW(parse_sinfo_nodes("node1|idle|2|2048|10.0.0.1|(null)\nnode2|idle|2|2048|10.0.0.2\n"), SystemError);
}

TEST(SlurmParseGres, GpusAmongTheGenericResources) {
  EXPECT_EQ(parse_gres_gpus("(null)"), 0);
  EXPECT_EQ(parse_gres_gpus(""), 0);
  EXPECT_EQ(parse_gres_gpus("gpu:4"), 4);
  EXPECT_EQ(parse_gres_gpus("gpu:tesla:2"), 2);
  EXPECT_EQ(parse_gres_gpus("gpu:a100:4(S:0-1)"), 4);
  EXPECT_EQ(parse_gres_gpus("gpu:a100:2(S:0,1),gpu:v100:1(S:1),nvme:1"), 3);  // commas inside (S:...) kept
  EXPECT_EQ(parse_gres_gpus("nvme:2,mps:100"), 0);
  EXPECT_EQ(parse_gres_gpus("gpu"), 1);
  EXPECT_EQ(parse_gres_gpus("gpugpu:3"), 0);  // another resource's name
  for (const std::string& bad : std::vector<std::string>{"gpu:4;rm", "gpu:$(id)", "gpu:4(S:0", "gpu:4)", "gpu:99999", "gpu:1024,gpu:1",
                                std::string("gpu:1 2"), std::string(2000, 'g')})
    EXPECT_THROW(parse_gres_gpus(bad), SystemError) << bad;
}

TEST(SlurmParseExitCode, Forms) {
  auto e = parse_exit_code("3:0");
  EXPECT_EQ(e.code, 3);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.batchai_exit_code(), 3);
  EXPECT_EQ(parse_exit_code("0:15").batchai_exit_code(), 143);
  for (auto bad : {"", "3", ":", "3:", "-1:0", "256:0", "0:128", "a:b", "3:0:0"})
    EXPECT_THROW(parse_exit_code(bad), SystemError) << bad;
}

TEST(SlurmParseSqueue, Lines) {
  auto j = parse_squeue_line("12|RUNNING|2|node[1-2]|/home/a/jobs/k12\x1fNone");
  EXPECT_EQ(j.id, 12u);
  EXPECT_EQ(j.slurm_state, "RUNNING");
  EXPECT_EQ(j.node_count, 2);
  EXPECT_EQ(j.node_list, "node[1-2]");
  EXPECT_EQ(j.work_dir, "/home/a/jobs/k12");
  EXPECT_TRUE(j.reason.empty());
  EXPECT_FALSE(j.exit);
  // '|' in both the folder and the reason: the folder ends at the unit separator
  auto p = parse_squeue_line("13|PENDING|3||/home/a|b/jobs/k13\x1fNodes required for job are DOWN, DRAINED | or reserved");
  EXPECT_EQ(p.reason, "Nodes required for job are DOWN, DRAINED | or reserved");
  EXPECT_EQ(p.work_dir, "/home/a|b/jobs/k13");
  EXPECT_TRUE(p.node_list.empty());
  EXPECT_TRUE(parse_squeue_line("14|PENDING|1||(null)\x1fPriority").work_dir.empty());
  EXPECT_THROW(parse_squeue_line("12|RUNNING|2"), SystemError);
  EXPECT_THROW(parse_squeue_line("12|RUNNING|2|n|None"), SystemError);  // no separator: another format
  EXPECT_THROW(parse_squeue_line("x|RUNNING|2|n|/w\x1fNone"), InvalidArgument);
  EXPECT_THROW(parse_squeue_line("12|running|2|n|/w\x1fNone"), SystemError);
  EXPECT_THROW(parse_squeue_line("12|RUNNING|2|n;rm|/w\x1fNone"), SystemError);
  EXPECT_THROW(parse_squeue_line("12|RUNNING|2|n|/w\x1f" "bad\x01reason"), SystemError);
  EXPECT_THROW(parse_squeue_line("12|RUNNING|2|n|/" + std::string(5000, 'w') + "\x1fNone"), SystemError);
}

TEST(SlurmParseSqueue, TheSameJobIsTheOneRunInTheSameFolder) {
  JobInfo j;
  EXPECT_TRUE(is_same_job(j, "/home/a/jobs/k1"));  // a record without a folder
  j.work_dir = "/home/a/jobs/k1";
  EXPECT_TRUE(is_same_job(j, "/home/a/jobs/k1"));
  EXPECT_TRUE(is_same_job(j, "/home/a/jobs/k1/"));
  EXPECT_TRUE(is_same_job(j, "/other  home/jobs/k1"));  // Key=Value records fold spaces
  EXPECT_FALSE(is_same_job(j, "/home/a/jobs/k2"));
  j.work_dir = "/home/b/jobs/theirs";
  EXPECT_FALSE(is_same_job(j, "/home/a/jobs/k1"));
  j.work_dir = "/";
  EXPECT_FALSE(is_same_job(j, "/home/a/jobs/k1"));
}

TEST(SlurmParseScontrol, JobLine) {
  const char* line =
      "JobId=2 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=1 Nice=0 JobState=CANCELLED by 0 "
      "Reason=None Dependency=(null) Requeue=1 ExitCode=0:15 RunTime=00:00:02 NodeList=node1 BatchHost=node1 "
      "NumNodes=1 NumCPUs=1 ReqB:S:C:T=0:0:*:* Command=(null) WorkDir=/tmp StdOut=/tmp/slurm-2.out Power= \n";
  auto j = parse_scontrol_job(line);
  EXPECT_EQ(j.id, 2u);
  EXPECT_EQ(j.slurm_state, "CANCELLED");
  ASSERT_TRUE(j.exit);
  EXPECT_EQ(j.exit->signal, 15);
  EXPECT_EQ(j.node_count, 1);
  EXPECT_EQ(j.node_list, "node1");
  EXPECT_EQ(outcome_of(j).error_code, "JobTerminated");
  auto pending = parse_scontrol_job("JobId=4 JobState=PENDING Reason=Priority NodeList=(null) NumNodes=2");
  EXPECT_EQ(pending.reason, "Priority");
  EXPECT_TRUE(pending.node_list.empty());
  EXPECT_THROW(parse_scontrol_job("JobName=x JobState=RUNNING"), SystemError);  // no JobId
  EXPECT_THROW(parse_scontrol_job("JobId=4"), SystemError);                     // no JobState
  EXPECT_THROW(parse_scontrol_job("JobId=0 JobState=RUNNING"), InvalidArgument);
}

TEST(SlurmParseKeyValues, SpacesAndRepeats) {
  auto kv = parse_key_values("A=1 B=two words C=3 A=9 =x");
  EXPECT_EQ(kv["A"], "1");
  EXPECT_EQ(kv["B"], "two words");
  EXPECT_EQ(kv["C"], "3");  // "=x" has no key and follows a repeated key: dropped
}

TEST(SlurmParseSacct, Line) {
  auto j = parse_sacct_line("1|CANCELLED by 0|0:15|2|node[1-2]|None|/shared/jobs/k|with a bar\n");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->id, 1u);
  EXPECT_EQ(j->slurm_state, "CANCELLED");
  EXPECT_EQ(j->node_count, 2);
  EXPECT_EQ(j->node_list, "node[1-2]");
  EXPECT_EQ(j->work_dir, "/shared/jobs/k|with a bar");  // the last field keeps its '|'
  ASSERT_TRUE(j->exit);
  EXPECT_EQ(j->exit->signal, 15);
  auto f = parse_sacct_line("2|FAILED|3:0|1|h1|NonZeroExitCode|/w");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->exit->code, 3);
  EXPECT_EQ(outcome_of(*f).error_code, "JobFailed");
  EXPECT_FALSE(parse_sacct_line("  \n"));
  EXPECT_THROW(parse_sacct_line("garbage"), SystemError);
  EXPECT_THROW(parse_sacct_line("x|FAILED|3:0|1|h1|None|/w"), Error);  // not a job id
  EXPECT_THROW(parse_sacct_line("3|FAILED|3:0|1|h1\x01|None|/w"), SystemError);  // not a host list
}

TEST(SlurmParseConfig, KeysAndVersion) {
  auto cfg = parse_scontrol_config(
      "Configuration data as of 2026-11-24T23:45:00\nJobCompLoc              = /x/log/jobcomp.txt\n"
      "JobCompType             = jobcomp/filetxt\nSLURM_VERSION           = 22.05.8\n\n"
      "Slurmctld(primary) at vm is UP\n");
  EXPECT_EQ(cfg["JobCompType"], "jobcomp/filetxt");
  EXPECT_EQ(cfg["JobCompLoc"], "/x/log/jobcomp.txt");
  auto v = parse_slurm_version(cfg["SLURM_VERSION"]);
  EXPECT_EQ(v.major, 22);
  EXPECT_EQ(v.minor, 5);
  EXPECT_TRUE(v.at_least(20, 11));
  EXPECT_FALSE(parse_slurm_version("20.02.7").at_least(20, 11));
  EXPECT_TRUE(parse_slurm_version("slurm-wlm 23.11.0-1").at_least(20, 11));
  for (auto bad : {"", "22", "x.y", "22.x", "1000.1.1", "22.100"})
    EXPECT_THROW(parse_slurm_version(bad), SystemError) << bad;
}

TEST(SlurmParseIds, SbatchAndJobIds) {
  EXPECT_EQ(parse_sbatch_parsable("42\n"), 42u);
  EXPECT_EQ(parse_sbatch_parsable("42;batchai\n"), 42u);
  for (auto bad : {"", "\n", "0", "x", "42;bad cluster", "-1", "4294967295", "99999999999", "42 43"})
    EXPECT_THROW(parse_sbatch_parsable(bad), SystemError) << bad;
  EXPECT_EQ(parse_job_id("4294967294"), 4294967294u);
  for (auto bad : {"", "0", "007", "1e3", "+1", "4294967295", "12345678901"})
    EXPECT_THROW(parse_job_id(bad), InvalidArgument) << bad;
}

TEST(SlurmHostlist, Expand) {
  EXPECT_EQ(expand_hostlist("node[1-3]"), (std::vector<std::string>{"node1", "node2", "node3"}));
  EXPECT_EQ(expand_hostlist("node[1-2,5],gpu07"), (std::vector<std::string>{"node1", "node2", "node5", "gpu07"}));
  EXPECT_EQ(expand_hostlist("n[08-10]x"), (std::vector<std::string>{"n08x", "n09x", "n10x"}));
  EXPECT_EQ(expand_hostlist("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(expand_hostlist("").empty());
  EXPECT_THROW(expand_hostlist("node[1-3"), SystemError);
  EXPECT_THROW(expand_hostlist("node[3-1]"), SystemError);
  EXPECT_THROW(expand_hostlist("node[]"), SystemError);
  EXPECT_THROW(expand_hostlist("node[1-999999999]"), SystemError);  // bounded
  EXPECT_THROW(expand_hostlist("node[1-5]", 4), SystemError);
  EXPECT_THROW(expand_hostlist("no de"), SystemError);
  EXPECT_THROW(expand_hostlist("a,,b"), SystemError);
}

}  // namespace
}  // namespace batchai::slurm
