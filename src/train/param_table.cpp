// Parameter table helpers and the tutorial's table (derived from network.hpp).
#include "param_table.hpp"

#include "batchai/common/errors.hpp"
#include "network.hpp"

namespace batchai::train {

std::size_t ParamEntry::size() const {
  std::size_t n = 1;
  for (int d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

ParamTable tutorial_param_table() {
  const Network& net = tutorial_keras_network();
  const std::vector<LayerSpec> specs = model_layers(net);
  return param_table_for(specs, infer_shapes(specs, net.height, net.width, net.channels));
}

std::size_t param_count(const ParamTable& table) {
  return table.empty() ? 0 : table.back().offset + table.back().size();
}

const ParamEntry& find_param(const ParamTable& table, const std::string& layer, const std::string& weight) {
  for (const auto& e : table) {
    if (e.layer == layer && e.weight == weight) return e;
  }
  throw NotFound("weight '" + layer + "/" + weight + "' is not in the model's parameter table; "
                 "the file was probably saved from a different network");
}

}  // namespace batchai::train
