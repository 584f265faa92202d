// The network and optimizer are defined once (network.hpp, optimizer.hpp): the Keras JSON,
// the Model's layers, the shapes and the parameter table derived from them, pinned against
// the exact text and layout the hand-written Keras description produced before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "batchai/common/errors.hpp"
#include "io/keras_model_config.hpp"
#include "network.hpp"

namespace batchai::train {
namespace {

// model.save()'s model_config for the tutorial's cifar10_cnn, as Keras 2.1.6 wrote it.
const char* const kTutorialModelConfig =
    R"json({"class_name":"Sequential","config":[{"class_name":"Conv2D","config":{"name":"conv2d_1","trainable":)json"
    R"json(true,"batch_input_shape":[null,32,32,3],"dtype":"float32","filters":32,"kernel_size":[3,3],"strides")json"
    R"json(:[1,1],"padding":"same","data_format":"channels_last","dilation_rate":[1,1],"activation":"linear","u)json"
    R"json(se_bias":true,"kernel_initializer":{"class_name":"VarianceScaling","config":{"scale":1.0,"mode":"fan)json"
    R"json(_avg","distribution":"uniform","seed":null}},"bias_initializer":{"class_name":"Zeros","config":{}},")json"
    R"json(kernel_regularizer":null,"bias_regularizer":null,"activity_regularizer":null,"kernel_constraint":nul)json"
    R"json(l,"bias_constraint":null}},{"class_name":"Activation","config":{"name":"activation_1","trainable":tr)json"
    R"json(ue,"activation":"relu"}},{"class_name":"Conv2D","config":{"name":"conv2d_2","trainable":true,"filter)json"
    R"json(s":32,"kernel_size":[3,3],"strides":[1,1],"padding":"valid","data_format":"channels_last","dilation_)json"
    R"json(rate":[1,1],"activation":"linear","use_bias":true,"kernel_initializer":{"class_name":"VarianceScalin)json"
    R"json(g","config":{"scale":1.0,"mode":"fan_avg","distribution":"uniform","seed":null}},"bias_initializer":)json"
    R"json({"class_name":"Zeros","config":{}},"kernel_regularizer":null,"bias_regularizer":null,"activity_regul)json"
    R"json(arizer":null,"kernel_constraint":null,"bias_constraint":null}},{"class_name":"Activation","config":{)json"
    R"json("name":"activation_2","trainable":true,"activation":"relu"}},{"class_name":"MaxPooling2D","config":{)json"
    R"json("name":"max_pooling2d_1","trainable":true,"pool_size":[2,2],"padding":"valid","strides":[2,2],"data_)json"
    R"json(format":"channels_last"}},{"class_name":"Dropout","config":{"name":"dropout_1","trainable":true,"rat)json"
    R"json(e":0.25,"noise_shape":null,"seed":null}},{"class_name":"Conv2D","config":{"name":"conv2d_3","trainab)json"
    R"json(le":true,"filters":64,"kernel_size":[3,3],"strides":[1,1],"padding":"same","data_format":"channels_l)json"
    R"json(ast","dilation_rate":[1,1],"activation":"linear","use_bias":true,"kernel_initializer":{"class_name":)json"
    R"json("VarianceScaling","config":{"scale":1.0,"mode":"fan_avg","distribution":"uniform","seed":null}},"bia)json"
    R"json(s_initializer":{"class_name":"Zeros","config":{}},"kernel_regularizer":null,"bias_regularizer":null,)json"
    R"json("activity_regularizer":null,"kernel_constraint":null,"bias_constraint":null}},{"class_name":"Activat)json"
    R"json(ion","config":{"name":"activation_3","trainable":true,"activation":"relu"}},{"class_name":"Conv2D",")json"
    R"json(config":{"name":"conv2d_4","trainable":true,"filters":64,"kernel_size":[3,3],"strides":[1,1],"paddin)json"
    R"json(g":"valid","data_format":"channels_last","dilation_rate":[1,1],"activation":"linear","use_bias":true)json"
    R"json(,"kernel_initializer":{"class_name":"VarianceScaling","config":{"scale":1.0,"mode":"fan_avg","distri)json"
    R"json(bution":"uniform","seed":null}},"bias_initializer":{"class_name":"Zeros","config":{}},"kernel_regula)json"
    R"json(rizer":null,"bias_regularizer":null,"activity_regularizer":null,"kernel_constraint":null,"bias_const)json"
    R"json(raint":null}},{"class_name":"Activation","config":{"name":"activation_4","trainable":true,"activatio)json"
    R"json(n":"relu"}},{"class_name":"MaxPooling2D","config":{"name":"max_pooling2d_2","trainable":true,"pool_s)json"
    R"json(ize":[2,2],"padding":"valid","strides":[2,2],"data_format":"channels_last"}},{"class_name":"Dropout")json"
    R"json(,"config":{"name":"dropout_2","trainable":true,"rate":0.25,"noise_shape":null,"seed":null}},{"class_)json"
    R"json(name":"Flatten","config":{"name":"flatten_1","trainable":true}},{"class_name":"Dense","config":{"nam)json"
    R"json(e":"dense_1","trainable":true,"units":512,"activation":"linear","use_bias":true,"kernel_initializer")json"
    R"json(:{"class_name":"VarianceScaling","config":{"scale":1.0,"mode":"fan_avg","distribution":"uniform","se)json"
    R"json(ed":null}},"bias_initializer":{"class_name":"Zeros","config":{}},"kernel_regularizer":null,"bias_reg)json"
    R"json(ularizer":null,"activity_regularizer":null,"kernel_constraint":null,"bias_constraint":null}},{"class)json"
    R"json(_name":"Activation","config":{"name":"activation_5","trainable":true,"activation":"relu"}},{"class_n)json"
    R"json(ame":"Dropout","config":{"name":"dropout_3","trainable":true,"rate":0.5,"noise_shape":null,"seed":nu)json"
    R"json(ll}},{"class_name":"Dense","config":{"name":"dense_2","trainable":true,"units":10,"activation":"line)json"
    R"json(ar","use_bias":true,"kernel_initializer":{"class_name":"VarianceScaling","config":{"scale":1.0,"mode)json"
    R"json(":"fan_avg","distribution":"uniform","seed":null}},"bias_initializer":{"class_name":"Zeros","config")json"
    R"json(:{}},"kernel_regularizer":null,"bias_regularizer":null,"activity_regularizer":null,"kernel_constrain)json"
    R"json(t":null,"bias_constraint":null}},{"class_name":"Activation","config":{"name":"activation_6","trainab)json"
    R"json(le":true,"activation":"softmax"}}]})json";

TEST(Network, ModelConfigIsTheKerasText) { EXPECT_EQ(tutorial_model_config_json(), kTutorialModelConfig); }

TEST(Network, TrainingConfigIsTheKerasText) {
  EXPECT_EQ(tutorial_training_config_json(1e-4),
            R"json({"optimizer_config":{"class_name":"RMSprop","config":{"lr":0.0001,"rho":0.9,"decay":1e-06,"epsilon":1e-07}})json"
            R"json(,"loss":"categorical_crossentropy","metrics":["accuracy"],"sample_weight_mode":null,"loss_weights":null})json");
  EXPECT_EQ(tutorial_training_config_json(4e-4),
            R"json({"optimizer_config":{"class_name":"RMSprop","config":{"lr":0.0004,"rho":0.9,"decay":1e-06,"epsilon":1e-07}})json"
            R"json(,"loss":"categorical_crossentropy","metrics":["accuracy"],"sample_weight_mode":null,"loss_weights":null})json");
  RmsPropConfig other;
  other.lr = 0.5;
  other.rho = 0.8;
  EXPECT_NE(keras_training_config_json(other).find(R"("lr":0.5,"rho":0.8,)"), std::string::npos);
}

TEST(Network, ModelLayersFuseActivationsAndDropFlatten) {
  const std::vector<LayerSpec> specs = tutorial_network();
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv2d_1", "conv2d_2", "max_pooling2d_1", "dropout_1", "conv2d_3",
                                             "conv2d_4", "max_pooling2d_2", "dropout_2", "dense_1", "dropout_3",
                                             "dense_2"}));
  EXPECT_TRUE(specs[0].relu);
  EXPECT_TRUE(specs[0].same);
  EXPECT_FALSE(specs[1].same);
  EXPECT_EQ(specs[3].rate, 0.25f);
  EXPECT_TRUE(specs[8].relu);
  EXPECT_EQ(specs[9].rate, 0.5f);
  EXPECT_FALSE(specs[10].relu);  // the softmax sits in the loss
  EXPECT_EQ(specs[10].units, 10);
}

TEST(Network, ShapesAndTableComeFromOnePass) {
  const Network& net = tutorial_keras_network();
  const std::vector<LayerSpec> specs = model_layers(net);
  const std::vector<LayerShape> shapes = infer_shapes(specs, net.height, net.width, net.channels);
  ASSERT_EQ(shapes.size(), specs.size());
  EXPECT_EQ(shapes[1].oh, 30);  // valid 3x3
  EXPECT_EQ(shapes[7].out_size(), 6u * 6u * 64u);
  EXPECT_EQ(shapes[10].out_size(), 10u);
  const ParamTable table = param_table_for(specs, shapes);
  const ParamTable tutorial = tutorial_param_table();
  ASSERT_EQ(table.size(), tutorial.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].layer + "/" + table[i].weight, tutorial[i].layer + "/" + tutorial[i].weight);
    EXPECT_EQ(table[i].shape, tutorial[i].shape);
    EXPECT_EQ(table[i].offset, tutorial[i].offset);
  }
  EXPECT_EQ(find_param(table, "dense_1", "kernel:0").shape, (std::vector<int>{2304, 512}));
  EXPECT_EQ(find_param(table, "dense_2", "bias:0").offset, 1250848u);
  EXPECT_EQ(param_count(table), 1250858u);
}

TEST(Network, ActivationsTheModelCannotFuseAreRefused) {
  Network twice = tutorial_keras_network();
  twice.layers.insert(twice.layers.begin() + 4, {KerasClass::kActivation, "activation_x", 0, false, "relu", 0.0});
  EXPECT_THROW(model_layers(twice), InvalidArgument);  // after another activation
  Network early = tutorial_keras_network();
  early.layers[1].activation = "softmax";
  EXPECT_THROW(model_layers(early), InvalidArgument);  // softmax before the end
}

}  // namespace
}  // namespace batchai::train
