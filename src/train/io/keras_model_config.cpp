// The JSON that Keras 2.1.6's model.save() stored for a Sequential network: a plain list of
// layer configs, plus the compile() settings; both written from the network's and the
// optimizer's one definition.
#include "io/keras_model_config.hpp"

#include <nlohmann/json.hpp>

namespace batchai::train {
namespace {

using Json = nlohmann::ordered_json;

Json glorot_uniform() {
  return {{"class_name", "VarianceScaling"},
          {"config", {{"scale", 1.0}, {"mode", "fan_avg"}, {"distribution", "uniform"},
                      {"seed", nullptr}}}};
}

Json weight_options() {
  return {{"use_bias", true},
          {"kernel_initializer", glorot_uniform()},
          {"bias_initializer", {{"class_name", "Zeros"}, {"config", Json::object()}}},
          {"kernel_regularizer", nullptr},
          {"bias_regularizer", nullptr},
          {"activity_regularizer", nullptr},
          {"kernel_constraint", nullptr},
          {"bias_constraint", nullptr}};
}

// The class-specific part of one layer's config, after its name and "trainable".
void add_layer_config(const KerasLayer& l, Json& c) {
  switch (l.cls) {
    case KerasClass::kConv2D:
      c["filters"] = l.units;
      c["kernel_size"] = {kConvKernel, kConvKernel};
      c["strides"] = {1, 1};
      c["padding"] = l.same ? "same" : "valid";
      c["data_format"] = "channels_last";
      c["dilation_rate"] = {1, 1};
      c["activation"] = "linear";  // the Activation layer after it applies the non-linearity
      c.update(weight_options());
      break;
    case KerasClass::kDense:
      c["units"] = l.units;
      c["activation"] = "linear";
      c.update(weight_options());
      break;
    case KerasClass::kActivation:
      c["activation"] = l.activation;
      break;
    case KerasClass::kMaxPooling2D:
      c["pool_size"] = {kPoolSize, kPoolSize};
      c["padding"] = "valid";
      c["strides"] = {kPoolSize, kPoolSize};
      c["data_format"] = "channels_last";
      break;
    case KerasClass::kDropout:
      c["rate"] = l.rate;
      c["noise_shape"] = nullptr;
      c["seed"] = nullptr;
      break;
    case KerasClass::kFlatten:
      break;
  }
}

}  // namespace

std::string keras_model_config_json(const Network& network) {
  Json layers = Json::array();
  for (const KerasLayer& l : network.layers) {
    Json c = {{"name", l.name}, {"trainable", true}};
    if (layers.empty()) {  // Keras records the input on the first layer
      c["batch_input_shape"] = {nullptr, network.height, network.width, network.channels};
      c["dtype"] = "float32";
    }
    add_layer_config(l, c);
    layers.push_back({{"class_name", keras_class_name(l.cls)}, {"config", std::move(c)}});
  }
  return Json{{"class_name", "Sequential"}, {"config", layers}}.dump();
}

std::string keras_training_config_json(const RmsPropConfig& optimizer) {
  Json settings = {{"class_name", "RMSprop"},
                   {"config", {{"lr", optimizer.lr}, {"rho", optimizer.rho}, {"decay", optimizer.decay},
                               {"epsilon", optimizer.epsilon}}}};
  return Json{{"optimizer_config", settings},
              {"loss", "categorical_crossentropy"},
              {"metrics", {"accuracy"}},
              {"sample_weight_mode", nullptr},
              {"loss_weights", nullptr}}
      .dump();
}

std::string tutorial_model_config_json() { return keras_model_config_json(tutorial_keras_network()); }

std::string tutorial_training_config_json(double learning_rate) {
  RmsPropConfig config;
  config.lr = learning_rate;
  return keras_training_config_json(config);
}

}  // namespace batchai::train
