// Keras HDF5 model file: write the tutorial model, reopen it, check names, shapes, values
// and that the root attributes are the JSON Keras 2.1.6 wrote.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "batchai/common/errors.hpp"
#include "io/keras_h5.hpp"
#include "io/keras_model_config.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train {
namespace {
namespace fs = std::filesystem;

class KerasH5Test : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = tutorial_param_table();
    weights_.resize(param_count(table_));
    for (std::size_t i = 0; i < weights_.size(); ++i) weights_[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
  }
  test::TempDir tmp_{"batchai-h5-test"};
  fs::path dir_ = tmp_.path();
  ParamTable table_;
  std::vector<float> weights_;
};

TEST_F(KerasH5Test, RoundTripsTheTutorialModel) {
  const fs::path path = dir_ / "saved_models" / "keras_cifar10_trained_model.h5";
  save_keras_h5(path.string(), tutorial_model_config_json(), tutorial_training_config_json(1e-4),
                table_, weights_);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));

  const KerasModelFile file = load_keras_h5(path.string());
  EXPECT_EQ(file.keras_version, "2.1.6");
  EXPECT_EQ(file.backend, "tensorflow");
  const std::vector<std::string> expected_layers = {
      "conv2d_1", "activation_1", "conv2d_2", "activation_2", "max_pooling2d_1", "dropout_1",
      "conv2d_3", "activation_3", "conv2d_4", "activation_4", "max_pooling2d_2", "dropout_2",
      "flatten_1", "dense_1", "activation_5", "dropout_3", "dense_2", "activation_6"};
  EXPECT_EQ(file.layer_names, expected_layers);
  ASSERT_EQ(file.weights.size(), 12u);
  EXPECT_EQ(file.find("conv2d_1", "kernel:0").shape, (std::vector<int>{3, 3, 3, 32}));
  EXPECT_EQ(file.find("conv2d_4", "kernel:0").shape, (std::vector<int>{3, 3, 64, 64}));
  EXPECT_EQ(file.find("dense_1", "kernel:0").shape, (std::vector<int>{2304, 512}));
  EXPECT_EQ(file.find("dense_2", "bias:0").shape, (std::vector<int>{10}));
  EXPECT_THROW(file.find("dense_3", "bias:0"), NotFound);

  std::vector<float> back;
  keras_weights_to_table(file, table_, back);
  EXPECT_EQ(back, weights_);

  const auto config = nlohmann::json::parse(file.model_config);
  EXPECT_EQ(config["class_name"], "Sequential");
  ASSERT_EQ(config["config"].size(), 18u);
  EXPECT_EQ(config["config"][0]["class_name"], "Conv2D");
  EXPECT_EQ(config["config"][0]["config"]["batch_input_shape"], nlohmann::json({nullptr, 32, 32, 3}));
  EXPECT_EQ(config["config"][17]["config"]["activation"], "softmax");
  const auto training = nlohmann::json::parse(file.training_config);
  EXPECT_EQ(training["optimizer_config"]["class_name"], "RMSprop");
  EXPECT_DOUBLE_EQ(training["optimizer_config"]["config"]["lr"].get<double>(), 1e-4);
  EXPECT_EQ(training["loss"], "categorical_crossentropy");
  EXPECT_EQ(training["metrics"], nlohmann::json({"accuracy"}));
}

TEST_F(KerasH5Test, ShapeMismatchOnImportIsNamed) {
  const fs::path path = dir_ / "m.h5";
  save_keras_h5(path.string(), tutorial_model_config_json(), "", table_, weights_);
  KerasModelFile file = load_keras_h5(path.string());
  EXPECT_TRUE(file.training_config.empty());
  ParamTable other = table_;
  other[0].shape = {3, 3, 3, 16};
  try {
    std::vector<float> back;
    keras_weights_to_table(file, other, back);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("conv2d_1/kernel:0"), std::string::npos) << e.what();
  }
}

TEST_F(KerasH5Test, BadInputsGiveClearErrors) {
  EXPECT_THROW(load_keras_h5((dir_ / "missing.h5").string()), NotFound);
  fs::create_directories(dir_);
  std::ofstream(dir_ / "junk.h5") << "not hdf5";
  EXPECT_THROW(load_keras_h5((dir_ / "junk.h5").string()), InvalidArgument);
  ParamTable extra = table_;
  extra.push_back({"dense_9", "bias:0", {10}, 0});
  EXPECT_THROW(save_keras_h5((dir_ / "x.h5").string(), tutorial_model_config_json(), "", extra,
                             weights_),
               InvalidArgument);
  std::vector<float> short_weights(10);
  EXPECT_THROW(save_keras_h5((dir_ / "y.h5").string(), tutorial_model_config_json(), "", table_,
                             short_weights),
               InvalidArgument);
  EXPECT_THROW(save_keras_h5((dir_ / "z.h5").string(), "{not json", "", table_, weights_),
               InvalidArgument);
}

}  // namespace
}  // namespace batchai::train
