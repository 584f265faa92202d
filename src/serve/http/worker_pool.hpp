// The threads the routes run on (docs/serve.md "Limits"), apart from the I/O threads: a fixed
// number of workers and a bounded queue, so a flood of requests waits in a known amount of
// memory and is refused (503) past it, and a slow route (a job's terminate) holds one worker.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace batchai::serve {

class WorkerPool {
 public:
  WorkerPool(unsigned workers, std::size_t max_queued);
  ~WorkerPool();  // stop() and join, however long the last tasks take
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false (and `task` dropped) when the queue is full or the pool stopped.
  bool try_post(std::function<void()> task);
  // Refuses new tasks, drops queued ones, and waits up to `grace` for the running ones;
  // true when every worker was idle by then.
  bool stop(std::chrono::milliseconds grace);

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> queue_;
  std::size_t max_queued_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace batchai::serve
