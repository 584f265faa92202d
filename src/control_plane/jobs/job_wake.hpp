// Waking a supervisor that waits for its nodes. It sleeps on a FIFO in its job's state folder;
// the scheduler writes one byte there after it has committed the job's nodes, so the job starts
// at once instead of at the supervisor's next poll (which backs off to 500 ms and, with hundreds
// of queued jobs, bounded how fast a cluster could run short jobs). Only ever a hint: the
// supervisor still reads the job's state from the store, and still polls.
#pragma once
#include <chrono>
#include <cstddef>
#include <filesystem>

namespace batchai::control_plane {

// The FIFO's name in the job's state folder ($BATCHAI_HOME/jobs/<key>/).
inline constexpr const char* kJobWakeFile = "wake";

class JobWake {
 public:
  // Makes the FIFO `path` (0600) if it is not there and holds it open for reading.
  explicit JobWake(const std::filesystem::path& path);
  ~JobWake();
  JobWake(const JobWake&) = delete;
  JobWake& operator=(const JobWake&) = delete;

  // Returns when woken (what was written is drained) or after `timeout`.
  void wait(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;  // -1: no FIFO could be made; wait() then only sleeps
};

// Wakes the supervisor sleeping on `path`, if one is; never blocks, never follows a link, never
// writes to anything but a FIFO, and ignores every failure (the supervisor's poll still runs).
void wake_job(const std::filesystem::path& path);

// write(2) that cannot end the process with SIGPIPE when the reader has gone (a supervisor that
// closed its FIFO between our open and our write): SIGPIPE is blocked in this thread around the
// write, and taken back if the write raised it. Returns what write returned.
long write_without_sigpipe(int fd, const void* data, std::size_t size);

}  // namespace batchai::control_plane
