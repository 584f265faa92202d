#include "http/worker_pool.hpp"

namespace batchai::serve {

WorkerPool::WorkerPool(unsigned workers, std::size_t max_queued) : max_queued_(max_queued) {
  if (workers == 0) workers = 1;
  threads_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  stop(std::chrono::milliseconds(0));
  for (auto& t : threads_) t.join();
}

bool WorkerPool::try_post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

bool WorkerPool::stop(std::chrono::milliseconds grace) {
  std::deque<std::function<void()>> dropped;
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  dropped.swap(queue_);
  wake_.notify_all();
  const bool done = idle_.wait_for(lock, grace, [this] { return running_ == 0; });
  lock.unlock();
  dropped.clear();  // outside the lock: a task's captures may do work when destroyed
  return done;
}

void WorkerPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    try {
      task();
    } catch (...) {  // a task answers its own errors; one that escapes must not end the worker
    }
    task = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --running_;
    }
    idle_.notify_all();
  }
}

}  // namespace batchai::serve
