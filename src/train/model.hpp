// The trainer's model: a sequential stack of Conv2D / MaxPool2 / Dropout / Dense layers (as
// network.hpp derives them) over NHWC activations (a blocked chain where the backend gains by
// it: plan_layouts), with its parameters and gradients in one
// arena each, and every activation buffer allocated once for the largest batch.
// Forward/backward run on a Backend; zeroing of gradients is explicit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "batchai/train/backend.hpp"
#include "network.hpp"

namespace batchai::train {

struct BatchStats {
  double loss_sum = 0.0;  // summed over the batch's images
  int correct = 0;
  int count = 0;
};

class Model {
 public:
  // Allocates every buffer for batches up to `max_batch` images of (h, w, c).
  Model(Backend& backend, std::vector<LayerSpec> specs, int max_batch, int h = 32, int w = 32, int c = 3,
        int classes = 10);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ParamTable& table() const { return table_; }
  std::size_t param_count() const { return params_.size; }
  int max_batch() const { return max_batch_; }
  int input_size() const { return h_ * w_ * c_; }
  Buffer& params() { return params_; }
  Buffer& grads() { return grads_; }
  Backend& backend() { return backend_; }

  // Keras initialisers: Glorot-uniform kernels, zero biases, from a deterministic stream.
  void init_glorot(std::uint64_t seed);
  void set_params(const std::vector<float>& host);
  std::vector<float> get_params() const;
  std::vector<float> get_grads() const;
  void zero_grads();

  // One training pass over n <= max_batch images: x is host NHWC floats in [0,1], labels host
  // class indices. Zeroes the gradients, then leaves grads = d(mean loss over the n images)/dw.
  // Image j's dropout masks come from (dropout_seed, layer, first_image_key + j) alone, so an
  // image is dropped alike whichever rank or batch trains it (sharding stays exact) and reruns
  // repeat.
  BatchStats train_batch(const float* x, const float* labels, int n, bool dropout,
                         std::uint64_t dropout_seed, std::uint64_t first_image_key);
  // Where training drops features: each Dropout layer's place in the stack (its masks' stream is
  // dropout_layer_stream(dropout_seed, layer)), its features per image (NHWC order) and rate.
  struct DropoutSite {
    std::size_t layer;
    std::size_t features;
    float rate;
  };
  std::vector<DropoutSite> dropout_sites() const;
  // Forward only (no dropout): loss and accuracy for n <= max_batch images.
  BatchStats evaluate_batch(const float* x, const float* labels, int n);
  // Logits of the last forward pass (n x classes), for tests.
  std::vector<float> logits(int n) const;

  // A run of one rank, where no allreduce stands between train_batch and the optimizer, may leave
  // dense layers' weight gradients as their factors (Backend::dense_rmsprop_folds): those layers'
  // slots of grads() are then unspecified, and the optimizer updates them from folded_dense()
  // before the next train_batch. Off by default.
  void fold_dense_gradients(bool on) { fold_dense_ = on; }
  struct FoldedDense {
    DenseShape shape;
    const Buffer* x;   // the layer's input
    const Buffer* dy;  // the gradient at its output, masked by its ReLU
    std::size_t w_off, b_off;
  };
  // The layers the last train_batch folded, in arena order (none after zero_grads()).
  const std::vector<FoldedDense>& folded_dense() const { return folded_; }

  // Per-layer forward+backward seconds accumulated since the last reset (for the benchmark).
  struct LayerTime {
    std::string name;
    double forward_s = 0.0, backward_s = 0.0;
  };
  void enable_timing(bool on) { timing_ = on; }
  const std::vector<LayerTime>& layer_times() const { return times_; }

 private:
  struct Layer;
  // Asks the backend whether the first layers run as a blocked chain (Backend::blocked_chain_pays)
  // and sets their layouts; the chain goes on past a routed pooling through the convolutions that
  // want blocked activations (Backend::conv_wants_blocked) to the pooling after them.
  void plan_layouts();
  // Lets each pooling's backward do the backward of the ReLU before it and of a dropout after it
  // (backend.hpp's PoolBackwardFusion): two passes over memory fewer. Where the backend routes
  // poolings, they keep routes for their backward and do the dropout's forward too.
  void plan_fusions();
  // What the pooling at layer i does on the way in this training step (PoolRouting).
  PoolRouting pool_routing(std::size_t i, bool dropout, std::uint64_t seed, std::uint64_t first_image_key) const;
  BatchStats forward(const float* x, const float* labels, int n, bool dropout, std::uint64_t seed,
                     std::uint64_t first_image_key, bool want_grad);
  void backward(int n);

  Backend& backend_;
  std::vector<LayerSpec> specs_;
  int max_batch_, h_, w_, c_, classes_;
  ParamTable table_;
  Buffer params_, grads_, input_, labels_, dlogits_;
  std::vector<Layer> layers_;
  bool fold_dense_ = false;
  std::vector<FoldedDense> folded_;
  bool timing_ = false;
  std::vector<LayerTime> times_;
};

}  // namespace batchai::train
