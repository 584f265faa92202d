// Keras 2.1-compatible HDF5 model files (what the tutorial's model.save() writes): root
// attributes keras_version, backend, model_config, training_config, and group model_weights
// with one group per layer holding <layer>/<layer>/kernel:0 and bias:0 in Keras layouts.
#pragma once
#include <string>
#include <vector>

#include "batchai/train/param_table.hpp"

namespace batchai::train {

// model_config JSON of the tutorial's Sequential CNN in Keras 2.1.6 style (a list of 18 layer
// configs: conv2d_1, activation_1, ..., dense_2, activation_6).
std::string tutorial_model_config_json();
// training_config JSON: RMSprop(lr, decay=1e-6), categorical_crossentropy, metrics [accuracy].
std::string tutorial_training_config_json(double learning_rate);

// Writes `path` atomically (temp file + rename). Layer names (and their order) come from the
// model_config JSON; weights come from `table`, whose offsets index `keras_weights` (the
// output of export_keras). Throws InvalidArgument when the table names a layer the config
// lacks or exceeds the weights, SystemError when HDF5 fails.
void save_keras_h5(const std::string& path, const std::string& model_config_json,
                   const std::string& training_config_json, const ParamTable& table,
                   const std::vector<float>& keras_weights);

struct KerasWeight {
  std::string layer;   // "conv2d_1"
  std::string name;    // "kernel:0" (the dataset name inside the layer group)
  std::vector<int> shape;
  std::vector<float> values;
};

struct KerasModelFile {
  std::string keras_version;
  std::string backend;
  std::string model_config;     // JSON text
  std::string training_config;  // JSON text ("" when absent)
  std::vector<std::string> layer_names;  // model_weights/@layer_names, all layers in order
  std::vector<KerasWeight> weights;      // in layer order, then weight_names order

  // Throws NotFound naming the weight when absent.
  const KerasWeight& find(const std::string& layer, const std::string& name) const;
};

// Reads a Keras HDF5 model file; throws NotFound when missing, InvalidArgument when it is not
// a Keras model file (saying which group or attribute is missing).
KerasModelFile load_keras_h5(const std::string& path);

// Copies the file's weights into Keras-layout `keras_weights` at the table's offsets, checking
// every table entry exists with the same shape (InvalidArgument naming the first mismatch).
void keras_weights_to_table(const KerasModelFile& file, const ParamTable& table,
                            std::vector<float>& keras_weights);

}  // namespace batchai::train
