// Keras' RMSprop with time-based decay, as the tutorial configures it:
// lr_t = lr / (1 + decay * t); ms = rho*ms + (1-rho)*g^2; p -= lr_t * g / (sqrt(ms) + epsilon).
// The slot `ms` lives on the model's backend beside the parameters (same arena offsets).
#pragma once
#include <cstdint>
#include <vector>

#include "model.hpp"

namespace batchai::train {

// The tutorial's optimizer settings, defined here only: the saved training_config
// (keras_model_config.hpp) is written from these fields.
struct RmsPropConfig {
  double lr = 1e-4;  // already multiplied by the number of workers (Horovod's lr * size)
  double rho = 0.9;
  double epsilon = 1e-7;
  double decay = 1e-6;
};

class RmsProp {
 public:
  RmsProp(Model& model, RmsPropConfig config);
  ~RmsProp();
  RmsProp(const RmsProp&) = delete;
  RmsProp& operator=(const RmsProp&) = delete;

  // Learning rate for update number t (t = 0 for the first update).
  double lr_at(std::uint64_t t) const { return config_.lr / (1.0 + config_.decay * static_cast<double>(t)); }
  // Applies the model's current gradients (those left folded as well: Model::folded_dense());
  // then iterations() grows by one.
  void step();
  std::uint64_t iterations() const { return iterations_; }
  const RmsPropConfig& config() const { return config_; }

  // Optimizer state for checkpoints: the ms slot (host copy) and the update counter.
  std::vector<float> get_state() const;
  void set_state(const std::vector<float>& ms, std::uint64_t iterations);

 private:
  Model& model_;
  RmsPropConfig config_;
  Buffer ms_;
  std::uint64_t iterations_ = 0;
};

}  // namespace batchai::train
