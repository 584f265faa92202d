// The Keras 2.1.6 JSON that model.save() stores beside the weights, derived from the one
// definition of the network (network.hpp) and of the optimizer (optimizer.hpp's RmsPropConfig).
#pragma once
#include <string>

#include "network.hpp"
#include "optimizer.hpp"

namespace batchai::train {

// model_config: {"class_name": "Sequential", "config": [one entry per Keras layer]}.
std::string keras_model_config_json(const Network& network);
// training_config: the optimizer's class and settings, categorical_crossentropy, [accuracy].
std::string keras_training_config_json(const RmsPropConfig& optimizer);

// The tutorial's: keras_model_config_json(tutorial_keras_network()) (18 layer configs:
// conv2d_1, activation_1, ..., dense_2, activation_6) and RMSprop(lr) with the default
// rho, epsilon and decay.
std::string tutorial_model_config_json();
std::string tutorial_training_config_json(double learning_rate);

}  // namespace batchai::train
