// The JSON that Keras 2.1.6's model.save() stored for the tutorial's cifar10_cnn: a
// Sequential config as a plain list of layer configs, plus the compile() settings.
#include <nlohmann/json.hpp>

#include "batchai/train/keras_h5.hpp"

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

Json layer(const char* class_name, Json config) {
  return {{"class_name", class_name}, {"config", std::move(config)}};
}

Json conv(const std::string& name, int filters, const char* padding, bool first) {
  Json c = {{"name", name}, {"trainable", true}};
  if (first) {
    c["batch_input_shape"] = {nullptr, 32, 32, 3};
    c["dtype"] = "float32";
  }
  c["filters"] = filters;
  c["kernel_size"] = {3, 3};
  c["strides"] = {1, 1};
  c["padding"] = padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = {1, 1};
  c["activation"] = "linear";
  c.update(weight_options());
  return layer("Conv2D", c);
}

Json dense(const std::string& name, int units) {
  Json c = {{"name", name}, {"trainable", true}, {"units", units}, {"activation", "linear"}};
  c.update(weight_options());
  return layer("Dense", c);
}

Json activation(const std::string& name, const char* fn) {
  return layer("Activation", {{"name", name}, {"trainable", true}, {"activation", fn}});
}

Json max_pool(const std::string& name) {
  return layer("MaxPooling2D", {{"name", name}, {"trainable", true}, {"pool_size", {2, 2}},
                                {"padding", "valid"}, {"strides", {2, 2}},
                                {"data_format", "channels_last"}});
}

Json dropout(const std::string& name, double rate) {
  return layer("Dropout", {{"name", name}, {"trainable", true}, {"rate", rate},
                           {"noise_shape", nullptr}, {"seed", nullptr}});
}

}  // namespace

std::string tutorial_model_config_json() {
  Json layers = Json::array({
      conv("conv2d_1", 32, "same", true), activation("activation_1", "relu"),
      conv("conv2d_2", 32, "valid", false), activation("activation_2", "relu"),
      max_pool("max_pooling2d_1"), dropout("dropout_1", 0.25),
      conv("conv2d_3", 64, "same", false), activation("activation_3", "relu"),
      conv("conv2d_4", 64, "valid", false), activation("activation_4", "relu"),
      max_pool("max_pooling2d_2"), dropout("dropout_2", 0.25),
      layer("Flatten", {{"name", "flatten_1"}, {"trainable", true}}),
      dense("dense_1", 512), activation("activation_5", "relu"), dropout("dropout_3", 0.5),
      dense("dense_2", 10), activation("activation_6", "softmax")});
  return Json{{"class_name", "Sequential"}, {"config", layers}}.dump();
}

std::string tutorial_training_config_json(double learning_rate) {
  Json optimizer = {{"class_name", "RMSprop"},
                    {"config", {{"lr", learning_rate}, {"rho", 0.9}, {"decay", 1e-6},
                                {"epsilon", 1e-7}}}};
  return Json{{"optimizer_config", optimizer},
              {"loss", "categorical_crossentropy"},
              {"metrics", {"accuracy"}},
              {"sample_weight_mode", nullptr},
              {"loss_weights", nullptr}}
      .dump();
}

}  // namespace batchai::train
