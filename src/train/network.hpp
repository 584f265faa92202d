// The trainer's network, defined once: the tutorial's Keras Sequential CNN as its Keras layers
// (names, classes, configs). Everything else is derived from it: the Model's fused layer list,
// the per-layer shapes (one inference pass), the parameter table and the Keras model_config
// (keras_model_config.hpp). Change the network here and all of them follow.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "param_table.hpp"

namespace batchai::train {

// The Keras layer classes the trainer implements (Keras 2.1 class names in keras_class_name()).
enum class KerasClass { kConv2D, kActivation, kMaxPooling2D, kDropout, kFlatten, kDense };
const char* keras_class_name(KerasClass cls);

// Conv2D kernels are 3x3, stride 1; pooling is 2x2, stride 2 (what the backends implement).
inline constexpr int kConvKernel = 3;
inline constexpr int kPoolSize = 2;

struct KerasLayer {
  KerasClass cls;
  std::string name;        // Keras layer name: "conv2d_1", "activation_1", ...
  int units = 0;           // Conv2D filters, Dense units
  bool same = false;       // Conv2D padding "same" (else "valid")
  std::string activation;  // Activation: "relu" or "softmax"
  double rate = 0.0;       // Dropout rate
};

struct Network {
  int height = 0, width = 0, channels = 0;  // one input image (channels_last)
  std::vector<KerasLayer> layers;
};

// The tutorial's cifar10_cnn (18 Keras layers, 1,250,858 parameters).
const Network& tutorial_keras_network();

// What the Model runs: weights layers with their ReLU fused, pooling and dropout. Flatten is
// free in NHWC; the final softmax lives in the loss.
enum class LayerKind { kConv, kMaxPool, kDropout, kDense };

struct LayerSpec {
  LayerKind kind;
  std::string name;   // Keras name ("conv2d_1", "max_pooling2d_1", ...)
  int units = 0;      // conv filters or dense units
  bool same = false;  // conv padding "same" (else "valid")
  bool relu = false;  // ReLU fused after conv/dense
  float rate = 0.0f;  // dropout rate
};

// Fuses a Keras layer list into the Model's; throws InvalidArgument for an activation the
// Model cannot fuse (not after Conv2D/Dense, or a softmax before the end).
std::vector<LayerSpec> model_layers(const Network& network);
// model_layers(tutorial_keras_network()): Dense(10) is linear, softmax sits in the loss.
std::vector<LayerSpec> tutorial_network();

// Per-image input and output dims of one layer.
struct LayerShape {
  int ih = 0, iw = 0, ic = 0;
  int oh = 0, ow = 0, oc = 0;
  std::size_t out_size() const { return static_cast<std::size_t>(oh) * ow * oc; }
};

// The one shape-inference pass over a stack on an (h, w, c) input.
std::vector<LayerShape> infer_shapes(const std::vector<LayerSpec>& specs, int h, int w, int c);
// Keras-layout table from the inferred shapes: kernel then bias per weights layer, back to back.
ParamTable param_table_for(const std::vector<LayerSpec>& specs, const std::vector<LayerShape>& shapes);

}  // namespace batchai::train
