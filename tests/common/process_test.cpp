// Tests of the POSIX ProcessLauncher with real processes: exit codes, signals, redirection,
// environment, working directory, timeouts, process-group kills and detached spawns.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "batchai/common/errors.hpp"
#include "batchai/common/process.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using test::read_file;

class ProcessTest : public ::testing::Test {
 protected:
  ProcessSpec sh(const std::string& script) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", script};
    return spec;
  }

  // Waits (bounded) until `pid` is gone; true when it went.
  static bool wait_gone(pid_t pid, std::chrono::milliseconds limit = 5s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!process_alive(pid)) return true;
      std::this_thread::sleep_for(10ms);
    }
    return !process_alive(pid);
  }

  std::unique_ptr<ProcessLauncher> launcher_ = make_posix_process_launcher();
  test::TempDir tmp_{"batchai-process-test"};
  fs::path dir_ = tmp_.path();
};

TEST_F(ProcessTest, ExitCodes) {
  EXPECT_EQ(launcher_->run(sh("exit 0")).exit_code, 0);
  EXPECT_EQ(launcher_->run(sh("exit 3")).exit_code, 3);
  ProcessExit e = launcher_->run(sh("exit 255"));
  EXPECT_EQ(e.exit_code, 255);
  EXPECT_FALSE(e.signaled);
}

// A descriptor this process holds without close-on-exec (as a test harness's pipe is) must not
// reach the child: a detached supervisor holding it would keep the caller's pipe open for good.
TEST_F(ProcessTest, InheritedDescriptorsDoNotReachTheChild) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // deliberately without O_CLOEXEC
  ProcessSpec spec = sh("test -e /proc/self/fd/" + std::to_string(fds[1]) + " && echo open || echo closed");
  spec.stdout_file = dir_ / "out.txt";
  EXPECT_EQ(launcher_->run(spec).exit_code, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(read_file(dir_ / "out.txt"), "closed\n");
}

TEST_F(ProcessTest, SignalGives128PlusN) {
  ProcessExit e = launcher_->run(sh("kill -TERM $$"));
  EXPECT_TRUE(e.signaled);
  EXPECT_EQ(e.exit_code, 128 + SIGTERM);
  e = launcher_->run(sh("kill -KILL $$"));
  EXPECT_EQ(e.exit_code, 128 + SIGKILL);
}

TEST_F(ProcessTest, MissingProgramExits127WithMessage) {
  ProcessSpec spec;
  spec.argv = {"batchai-no-such-program-xyz"};
  spec.stderr_file = dir_ / "err.txt";
  EXPECT_EQ(launcher_->run(spec).exit_code, 127);
  EXPECT_NE(read_file(dir_ / "err.txt").find("command not found: batchai-no-such-program-xyz"),
            std::string::npos);
}

TEST_F(ProcessTest, EmptyArgvIsRejected) {
  ProcessSpec spec;
  EXPECT_THROW(launcher_->spawn(spec), InvalidArgument);
}

TEST_F(ProcessTest, RedirectionTruncateAppendAndShared) {
  ProcessSpec spec = sh("echo out; echo err 1>&2");
  spec.stdout_file = dir_ / "out.txt";
  spec.stderr_file = dir_ / "err.txt";
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);  // truncates
  EXPECT_EQ(read_file(dir_ / "out.txt"), "out\n");
  EXPECT_EQ(read_file(dir_ / "err.txt"), "err\n");

  spec.append = true;
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "out.txt"), "out\nout\n");

  ProcessSpec both = sh("echo one; echo two 1>&2; echo three");
  both.stdout_file = dir_ / "both.txt";
  both.stderr_file = dir_ / "both.txt";
  ASSERT_EQ(launcher_->run(both).exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "both.txt"), "one\ntwo\nthree\n");
}

TEST_F(ProcessTest, EnvironmentMergeAndUnset) {
  ::setenv("BATCHAI_PROCESS_TEST_INHERITED", "inherited", 1);
  ::setenv("BATCHAI_PROCESS_TEST_REMOVED", "removed", 1);
  ProcessSpec spec = sh(
      "echo \"$BATCHAI_PROCESS_TEST_INHERITED|$BATCHAI_PROCESS_TEST_NEW|"
      "${BATCHAI_PROCESS_TEST_REMOVED-unset}\"");
  spec.env["BATCHAI_PROCESS_TEST_NEW"] = "new value";
  spec.unset_env = {"BATCHAI_PROCESS_TEST_REMOVED"};
  spec.stdout_file = dir_ / "env.txt";
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "env.txt"), "inherited|new value|unset\n");
}

TEST_F(ProcessTest, ClearEnvGivesTheChildExactlyItsSpec) {
  ::setenv("BATCHAI_PROCESS_TEST_INHERITED", "inherited", 1);
  ::setenv("AZURE_STORAGE_KEY", "caller-secret", 1);
  ProcessSpec spec;
  spec.argv = {"/usr/bin/env"};
  spec.clear_env = true;
  spec.env = {{"ONLY", "this"}, {"PATH", "/usr/bin:/bin"}};
  spec.stdout_file = dir_ / "env.txt";
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);
  ::unsetenv("AZURE_STORAGE_KEY");
  EXPECT_EQ(read_file(dir_ / "env.txt"), "ONLY=this\nPATH=/usr/bin:/bin\n");
}

TEST_F(ProcessTest, NodeBaseEnvironmentIsTheMachinesNotTheCallers) {
  ::setenv("AZURE_STORAGE_KEY", "caller-secret", 1);
  const std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", ("/caller/bin:" + old_path).c_str(), 1);
  ::setenv("BATCHAI_PROCESS_TEST_SETTING", "kept", 1);
  ::setenv("BATCHAI_JOB_KEY", "the-callers-job", 1);
  const std::string old_home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "";
  ::setenv("HOME", "/caller/home", 1);
  auto env = node_base_environment();
  ::unsetenv("AZURE_STORAGE_KEY");
  ::unsetenv("BATCHAI_JOB_KEY");
  ::setenv("HOME", old_home.c_str(), 1);
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(env.count("AZURE_STORAGE_KEY"), 0u);
  EXPECT_EQ(env.count("BATCHAI_JOB_KEY"), 0u);  // a job's marker never passes to what it starts
  EXPECT_EQ(env["PATH"], "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  EXPECT_NE(env["HOME"], "/caller/home");
  EXPECT_FALSE(env["USER"].empty());
  EXPECT_EQ(env["USER"], env["LOGNAME"]);
  EXPECT_EQ(env["BATCHAI_PROCESS_TEST_SETTING"], "kept");
  for (const auto& [name, value] : env)
    EXPECT_TRUE(name.rfind("BATCHAI_", 0) == 0 || name == "PATH" || name == "HOME" || name == "USER" || name == "LOGNAME" ||
                name == "SHELL" || name == "LANG" || name == "LC_ALL" || name == "TMPDIR")
        << name << " is not part of a node's environment";
}

TEST_F(ProcessTest, PathLookupUsesChildPath) {
  fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  {
    std::ofstream script(bin / "batchai-test-tool");
    script << "#!/bin/sh\necho tool ran\n";
  }
  fs::permissions(bin / "batchai-test-tool", fs::perms::owner_all);
  ProcessSpec spec;
  spec.argv = {"batchai-test-tool"};
  spec.env["PATH"] = bin.string() + ":/usr/bin:/bin";
  spec.stdout_file = dir_ / "tool.txt";
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "tool.txt"), "tool ran\n");
}

TEST_F(ProcessTest, WorkingDirectory) {
  ProcessSpec spec = sh("pwd > where.txt");
  spec.cwd = dir_;
  ASSERT_EQ(launcher_->run(spec).exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "where.txt"), fs::canonical(dir_).string() + "\n");

  spec.cwd = dir_ / "missing";
  spec.stderr_file = dir_ / "err.txt";
  EXPECT_EQ(launcher_->run(spec).exit_code, 126);
  EXPECT_NE(read_file(dir_ / "err.txt").find("cannot change directory"), std::string::npos);
}

TEST_F(ProcessTest, WaitTimeoutThenKill) {
  pid_t pid = launcher_->spawn(sh("sleep 30"));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(launcher_->wait(pid, 100ms).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_TRUE(launcher_->signal_group(pid, SIGKILL));
  auto exit = launcher_->wait(pid, 5s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 128 + SIGKILL);
}

TEST_F(ProcessTest, WaitAnyReturnsTheChildThatExitedAndReapsIt) {
  const pid_t slow = launcher_->spawn(sh("sleep 30"));
  const pid_t quick = launcher_->spawn(sh("exit 3"));
  auto first = launcher_->wait_any({slow, quick}, 20s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->first, quick);
  EXPECT_EQ(first->second.exit_code, 3);
  EXPECT_THROW(launcher_->wait(quick, 0ms), SystemError);  // reaped: no longer our child
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(launcher_->wait_any({slow}, 100ms).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  launcher_->signal_group(slow, SIGKILL);
  auto second = launcher_->wait_any({slow}, 20s);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->second.exit_code, 128 + SIGKILL);
}

TEST_F(ProcessTest, WaitAnyWakesWhenTheChildExitsNotAtTheTimeout) {
  const pid_t pid = launcher_->spawn(sh("sleep 0.2"));
  const auto start = std::chrono::steady_clock::now();
  auto exited = launcher_->wait_any({pid}, 60s);
  ASSERT_TRUE(exited.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

TEST_F(ProcessTest, TheChildStartsWithNoSignalBlocked) {
  // The spawn blocks every signal around the clone (its child shares our memory until it
  // execs); the program must still start with none blocked, as after fork.
  sigset_t usr2, old;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  ::pthread_sigmask(SIG_BLOCK, &usr2, &old);
  ProcessSpec spec;
  spec.argv = {"grep", "^SigBlk", "/proc/self/status"};
  spec.stdout_file = dir_ / "status.txt";
  const pid_t pid = launcher_->spawn(spec);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_EQ(launcher_->wait(pid, std::nullopt)->exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "status.txt"), "SigBlk:\t0000000000000000\n");
}

TEST_F(ProcessTest, NewSessionMakesTheChildAGroupLeader) {
  ProcessSpec spec = sh("sleep 30");
  pid_t pid = launcher_->spawn(spec);
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_EQ(::getsid(pid), pid);
  launcher_->signal_group(pid, SIGKILL);
  launcher_->wait(pid, std::nullopt);
}

TEST_F(ProcessTest, KillingTheGroupLeavesNoOrphans) {
  // The child starts two background grandchildren (one of them with a child of its own),
  // records their pids, then waits.
  ProcessSpec spec = sh(
      "sleep 60 & echo $! >> pids.txt; "
      "sh -c 'sleep 60 & echo $! >> pids.txt; wait' & echo $! >> pids.txt; "
      "sleep 0.2; echo ready > ready.txt; wait");
  spec.cwd = dir_;
  pid_t pid = launcher_->spawn(spec);
  for (int i = 0; i < 500 && !fs::exists(dir_ / "ready.txt"); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(fs::exists(dir_ / "ready.txt"));
  std::vector<pid_t> pids;
  std::ifstream in(dir_ / "pids.txt");
  for (pid_t p; in >> p;) pids.push_back(p);
  ASSERT_EQ(pids.size(), 3u);
  for (pid_t p : pids) EXPECT_TRUE(process_alive(p)) << p;

  EXPECT_TRUE(launcher_->signal_group(pid, SIGKILL));
  auto exit = launcher_->wait(pid, 5s);
  ASSERT_TRUE(exit.has_value());
  for (pid_t p : pids) EXPECT_TRUE(wait_gone(p)) << "pid " << p << " survived the group kill";
}

TEST_F(ProcessTest, SpawnDetachedSurvivesAndIsNotOurChild) {
  ProcessSpec spec = sh("echo $$ > detached.txt; sleep 30");
  spec.cwd = dir_;
  pid_t pid = launcher_->spawn_detached(spec);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(process_alive(pid));
  for (int i = 0; i < 500 && read_file(dir_ / "detached.txt").empty(); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(read_file(dir_ / "detached.txt"), std::to_string(pid) + "\n");
  EXPECT_EQ(::getsid(pid), pid);
  // Not a child of ours: waitpid fails instead of blocking.
  EXPECT_THROW(launcher_->wait(pid, 10ms), SystemError);
  EXPECT_TRUE(launcher_->signal_group(pid, SIGKILL));
  EXPECT_TRUE(wait_gone(pid));
}

TEST_F(ProcessTest, ProcessAliveAndSelfExecutable) {
  EXPECT_TRUE(process_alive(::getpid()));
  EXPECT_FALSE(process_alive(0));
  EXPECT_FALSE(process_alive(-5));
  pid_t pid = launcher_->spawn(sh("exit 0"));
  // An exited but unreaped child is a zombie: not alive.
  EXPECT_TRUE(wait_gone(pid));
  launcher_->wait(pid, std::nullopt);
  EXPECT_TRUE(fs::exists(self_executable()));
  EXPECT_EQ(self_executable().filename().string().rfind("common_tests", 0), 0u);
}

}  // namespace
}  // namespace batchai
