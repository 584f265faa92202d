// Keras 2.1-compatible HDF5 model files (what the tutorial's model.save() writes): root
// attributes keras_version, backend, model_config, training_config, and group model_weights
// with one group per layer holding <layer>/<layer>/kernel:0 and bias:0 in Keras layouts.
#pragma once
#include <string>
#include <vector>

#include "param_table.hpp"

namespace batchai::train {

// Writes `path` atomically (temp file + rename). Layer names (and their order) come from the
// model_config JSON (keras_model_config.hpp); weights come from `table`, whose offsets index
// `keras_weights` (the Model's parameters, already in Keras layout). Throws InvalidArgument
// when the table names a layer the config lacks or exceeds the weights, SystemError when
// HDF5 fails.
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
