#include "control_plane_pool.hpp"

namespace batchai::serve {

ControlPlanePool::Lease ControlPlanePool::borrow() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      auto cp = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(cp));
    }
  }
  return Lease(*this, control_plane::ControlPlane::open(settings_, services_));
}

void ControlPlanePool::give_back(std::unique_ptr<control_plane::ControlPlane> cp) {
  // One opened read-only on a full disk is not kept: the next request opens again and writes
  // once there is room.
  if (!cp || cp->state_read_only()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(cp));
}

}  // namespace batchai::serve
