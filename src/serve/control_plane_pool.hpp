// Control planes for the request threads (docs/serve.md "Concurrency"): a ControlPlane holds one
// SQLite connection and is not thread-safe, so each request borrows one of its own and gives it
// back; the store's own locking (the same as between CLI processes) orders what they do. A single
// one behind a mutex would let one slow request (job terminate waits for the job's processes)
// stall every other. The pool grows to the number of request threads, no further.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "batchai/control_plane/control_plane.hpp"

namespace batchai::serve {

class ControlPlanePool {
 public:
  ControlPlanePool(control_plane::Settings settings, control_plane::Services services)
      : settings_(std::move(settings)), services_(std::move(services)) {}

  class Lease {
   public:
    Lease(ControlPlanePool& pool, std::unique_ptr<control_plane::ControlPlane> cp) : pool_(pool), cp_(std::move(cp)) {}
    ~Lease() { pool_.give_back(std::move(cp_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    control_plane::ControlPlane& operator*() { return *cp_; }

   private:
    ControlPlanePool& pool_;
    std::unique_ptr<control_plane::ControlPlane> cp_;
  };

  Lease borrow();

 private:
  void give_back(std::unique_ptr<control_plane::ControlPlane> cp);

  control_plane::Settings settings_;
  control_plane::Services services_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<control_plane::ControlPlane>> idle_;
};

}  // namespace batchai::serve
