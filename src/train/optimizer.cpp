// RMSprop over the model's parameter arena (see optimizer.hpp for the update rule).
#include "optimizer.hpp"

#include "batchai/common/errors.hpp"

namespace batchai::train {

RmsProp::RmsProp(Model& model, RmsPropConfig config)
    : model_(model), config_(config), ms_(model.backend().allocate(model.param_count())) {}

RmsProp::~RmsProp() { model_.backend().release(ms_); }

void RmsProp::step() {
  model_.backend().rmsprop_update(model_.params(), model_.grads(), ms_, static_cast<float>(lr_at(iterations_)),
                                  static_cast<float>(config_.rho), static_cast<float>(config_.epsilon));
  ++iterations_;
}

std::vector<float> RmsProp::get_state() const {
  std::vector<float> host(ms_.size);
  model_.backend().download(host.data(), ms_, host.size());
  return host;
}

void RmsProp::set_state(const std::vector<float>& ms, std::uint64_t iterations) {
  if (ms.size() != ms_.size) {
    throw InvalidArgument("optimizer state has " + std::to_string(ms.size()) + " values, the model needs " +
                          std::to_string(ms_.size) + "; the checkpoint belongs to a different network");
  }
  model_.backend().upload(ms_, ms.data(), ms.size());
  iterations_ = iterations;
}

}  // namespace batchai::train
