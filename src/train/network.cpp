// The tutorial's network and what is derived from it: the Model's fused layers, the shapes
// and the parameter table.
#include "network.hpp"

#include "batchai/common/errors.hpp"

namespace batchai::train {

const char* keras_class_name(KerasClass cls) {
  switch (cls) {
    case KerasClass::kConv2D: return "Conv2D";
    case KerasClass::kActivation: return "Activation";
    case KerasClass::kMaxPooling2D: return "MaxPooling2D";
    case KerasClass::kDropout: return "Dropout";
    case KerasClass::kFlatten: return "Flatten";
    case KerasClass::kDense: return "Dense";
  }
  return "?";
}

const Network& tutorial_keras_network() {
  using K = KerasClass;
  static const Network network{
      32, 32, 3,
      {
          {K::kConv2D, "conv2d_1", 32, true, "", 0.0},
          {K::kActivation, "activation_1", 0, false, "relu", 0.0},
          {K::kConv2D, "conv2d_2", 32, false, "", 0.0},
          {K::kActivation, "activation_2", 0, false, "relu", 0.0},
          {K::kMaxPooling2D, "max_pooling2d_1", 0, false, "", 0.0},
          {K::kDropout, "dropout_1", 0, false, "", 0.25},
          {K::kConv2D, "conv2d_3", 64, true, "", 0.0},
          {K::kActivation, "activation_3", 0, false, "relu", 0.0},
          {K::kConv2D, "conv2d_4", 64, false, "", 0.0},
          {K::kActivation, "activation_4", 0, false, "relu", 0.0},
          {K::kMaxPooling2D, "max_pooling2d_2", 0, false, "", 0.0},
          {K::kDropout, "dropout_2", 0, false, "", 0.25},
          {K::kFlatten, "flatten_1", 0, false, "", 0.0},
          {K::kDense, "dense_1", 512, false, "", 0.0},
          {K::kActivation, "activation_5", 0, false, "relu", 0.0},
          {K::kDropout, "dropout_3", 0, false, "", 0.5},
          {K::kDense, "dense_2", 10, false, "", 0.0},
          {K::kActivation, "activation_6", 0, false, "softmax", 0.0},
      }};
  return network;
}

std::vector<LayerSpec> model_layers(const Network& network) {
  std::vector<LayerSpec> specs;
  const auto& layers = network.layers;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const KerasLayer& k = layers[i];
    switch (k.cls) {
      case KerasClass::kConv2D:
        specs.push_back({LayerKind::kConv, k.name, k.units, k.same, false, 0.0f});
        break;
      case KerasClass::kDense:
        specs.push_back({LayerKind::kDense, k.name, k.units, false, false, 0.0f});
        break;
      case KerasClass::kMaxPooling2D:
        specs.push_back({LayerKind::kMaxPool, k.name, 0, false, false, 0.0f});
        break;
      case KerasClass::kDropout:
        specs.push_back({LayerKind::kDropout, k.name, 0, false, false, static_cast<float>(k.rate)});
        break;
      case KerasClass::kFlatten:
        break;  // NHWC activations already are channels_last-flattened
      case KerasClass::kActivation: {
        // Only an activation right after a weights layer can be fused into it.
        const bool after_weights =
            i > 0 && (layers[i - 1].cls == KerasClass::kConv2D || layers[i - 1].cls == KerasClass::kDense);
        if (k.activation == "relu" && after_weights) {
          specs.back().relu = true;
        } else if (k.activation == "softmax" && i + 1 == layers.size() && after_weights) {
          // the loss (softmax + cross entropy) applies it
        } else {
          throw InvalidArgument("layer " + k.name + ": activation '" + k.activation +
                                "' must directly follow a Conv2D or Dense layer (softmax only at the end)");
        }
        break;
      }
    }
  }
  return specs;
}

std::vector<LayerSpec> tutorial_network() { return model_layers(tutorial_keras_network()); }

std::vector<LayerShape> infer_shapes(const std::vector<LayerSpec>& specs, int h, int w, int c) {
  std::vector<LayerShape> shapes;
  shapes.reserve(specs.size());
  for (const auto& s : specs) {
    LayerShape l{h, w, c, h, w, c};
    switch (s.kind) {
      case LayerKind::kConv:
        if (!s.same) l.oh = h - (kConvKernel - 1), l.ow = w - (kConvKernel - 1);
        l.oc = s.units;
        break;
      case LayerKind::kMaxPool:
        l.oh = h / kPoolSize, l.ow = w / kPoolSize;
        break;
      case LayerKind::kDropout:
        break;
      case LayerKind::kDense:
        l.oh = 1, l.ow = 1, l.oc = s.units;
        break;
    }
    h = l.oh, w = l.ow, c = l.oc;
    shapes.push_back(l);
  }
  return shapes;
}

ParamTable param_table_for(const std::vector<LayerSpec>& specs, const std::vector<LayerShape>& shapes) {
  ParamTable table;
  std::size_t offset = 0;
  auto add = [&](const std::string& layer, const std::string& weight, std::vector<int> shape) {
    ParamEntry e{layer, weight, std::move(shape), offset};
    offset += e.size();
    table.push_back(std::move(e));
  };
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const LayerSpec& s = specs[i];
    const LayerShape& l = shapes.at(i);
    if (s.kind == LayerKind::kConv) {
      add(s.name, "kernel:0", {kConvKernel, kConvKernel, l.ic, l.oc});
    } else if (s.kind == LayerKind::kDense) {
      add(s.name, "kernel:0", {l.ih * l.iw * l.ic, l.oc});
    } else {
      continue;
    }
    add(s.name, "bias:0", {l.oc});
  }
  return table;
}

}  // namespace batchai::train
