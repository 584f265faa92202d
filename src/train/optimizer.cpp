// RMSprop over the model's parameter arena (see optimizer.hpp for the update rule).
#include "optimizer.hpp"

#include "batchai/common/errors.hpp"

namespace batchai::train {

RmsProp::RmsProp(Model& model, RmsPropConfig config)
    : model_(model), config_(config), ms_(model.backend().allocate(model.param_count())) {}

RmsProp::~RmsProp() { model_.backend().release(ms_); }

void RmsProp::step() {
  Backend& backend = model_.backend();
  const float lr = static_cast<float>(lr_at(iterations_)), rho = static_cast<float>(config_.rho);
  const float eps = static_cast<float>(config_.epsilon);
  // The arena between the folded layers (Model::fold_dense_gradients) as usual; each folded
  // layer, its kernel then its bias, from its gradient's factors.
  auto range = [](const Buffer& b, std::size_t begin, std::size_t end) {
    return Buffer{b.data + begin, end - begin, b.kind};
  };
  auto update = [&](std::size_t begin, std::size_t end) {
    if (end <= begin) return;
    Buffer p = range(model_.params(), begin, end), m = range(ms_, begin, end);
    backend.rmsprop_update(p, range(model_.grads(), begin, end), m, lr, rho, eps);
  };
  std::size_t at = 0;
  for (const Model::FoldedDense& f : model_.folded_dense()) {
    const std::size_t kernel_end = f.w_off + static_cast<std::size_t>(f.shape.in) * f.shape.out;
    if (f.w_off < at || f.b_off != kernel_end) {
      throw Error("folded dense layers out of arena order (internal error)");
    }
    update(at, f.w_off);
    backend.rmsprop_dense_from_factors(f.shape, *f.x, *f.dy, model_.params(), ms_, f.w_off, f.b_off, lr, rho, eps);
    at = f.b_off + static_cast<std::size_t>(f.shape.out);
  }
  update(at, model_.param_count());
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
