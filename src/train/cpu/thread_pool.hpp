// A tiny fixed pool for the CPU backend: run(parts, fn) calls fn(0..parts-1) with part 0 on the
// calling thread and the others on persistent workers, then waits. Created once per backend so
// no thread is spawned inside a training step.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace batchai::train::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(part) for part in [0, parts); parts <= size(). Exceptions in workers terminate.
  void run(int parts, const std::function<void(int)>& fn);

 private:
  void worker_loop(int index);
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* task_ = nullptr;
  int parts_ = 0;
  long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace batchai::train::cpu
