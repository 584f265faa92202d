// The supervisor's wake-up FIFO: a wake ends the wait at once, no wake lets it time out, and
// wake_job writes only to a FIFO (never through a link, never into a regular file).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "jobs/job_wake.hpp"
#include "support/temp_dir.hpp"

namespace batchai::control_plane {
namespace {

namespace fs = std::filesystem;
using Ms = std::chrono::milliseconds;

class JobWakeTest : public ::testing::Test {
 protected:
  static Ms timed_wait(JobWake& wake, Ms timeout) {
    const auto start = std::chrono::steady_clock::now();
    wake.wait(timeout);
    return std::chrono::duration_cast<Ms>(std::chrono::steady_clock::now() - start);
  }

  test::TempDir tmp_{"batchai-job-wake"};
  fs::path dir_ = tmp_.path();
};

TEST_F(JobWakeTest, AWakeEndsTheWaitAtOnce) {
  JobWake wake(dir_ / kJobWakeFile);
  EXPECT_TRUE(fs::is_fifo(dir_ / kJobWakeFile));
  std::thread waker([&] {
    std::this_thread::sleep_for(Ms(50));
    wake_job(dir_ / kJobWakeFile);
  });
  const Ms took = timed_wait(wake, Ms(5000));
  waker.join();
  EXPECT_LT(took, Ms(2000));
  // Drained: the next wait runs to its timeout.
  EXPECT_GE(timed_wait(wake, Ms(150)), Ms(140));
}

TEST_F(JobWakeTest, AWakeBeforeTheWaitIsKept) {
  JobWake wake(dir_ / kJobWakeFile);
  wake_job(dir_ / kJobWakeFile);
  EXPECT_LT(timed_wait(wake, Ms(5000)), Ms(2000));
}

TEST_F(JobWakeTest, WithoutAWakeTheWaitTimesOut) {
  JobWake wake(dir_ / kJobWakeFile);
  EXPECT_GE(timed_wait(wake, Ms(150)), Ms(140));
}

TEST_F(JobWakeTest, NoSupervisorNoFifoNothingWritten) {
  wake_job(dir_ / kJobWakeFile);  // nothing there: nothing made
  EXPECT_FALSE(fs::exists(dir_ / kJobWakeFile));
  {
    std::ofstream(dir_ / "regular") << "keep";
  }
  wake_job(dir_ / "regular");  // a regular file is not a FIFO: left as it was
  EXPECT_EQ(fs::file_size(dir_ / "regular"), 4u);
  fs::create_symlink(dir_ / "regular", dir_ / "link");
  wake_job(dir_ / "link");  // never through a link
  EXPECT_EQ(fs::file_size(dir_ / "regular"), 4u);
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "fifo", dir_ / "fifo-link");
  JobWake wake(dir_ / "fifo");
  wake_job(dir_ / "fifo-link");  // not even to a FIFO
  EXPECT_GE(timed_wait(wake, Ms(150)), Ms(140));
}

TEST_F(JobWakeTest, ARegularFileInItsPlaceOnlySleeps) {
  {
    std::ofstream(dir_ / kJobWakeFile) << "x";
  }
  JobWake wake(dir_ / kJobWakeFile);  // not a FIFO: falls back to sleeping
  EXPECT_GE(timed_wait(wake, Ms(100)), Ms(90));
  EXPECT_EQ(fs::file_size(dir_ / kJobWakeFile), 1u);
}

// A supervisor that closes its FIFO between the waker's open and its write: the write fails with
// EPIPE, and the waker (any command that ran the scheduler) must live on. Before, SIGPIPE ended
// `job create` now and then in a burst of jobs (exit status -13, no message, sometimes before the
// job's row was written).
TEST(WriteWithoutSigpipe, AGoneReaderDoesNotEndTheProcess) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // the reader is gone
  sigset_t before;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  const char byte = 1;
  EXPECT_EQ(write_without_sigpipe(fds[1], &byte, 1), -1);
  EXPECT_EQ(errno, EPIPE);
  sigset_t pending, after;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "the SIGPIPE the write raised was not taken back";
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGPIPE), sigismember(&before, SIGPIPE)) << "the signal mask was not restored";
  ::close(fds[1]);
}

}  // namespace
}  // namespace batchai::control_plane
