// The tutorial's parameter table and the (identity) Keras layout conversion.
#include "batchai/train/param_table.hpp"

#include "batchai/common/errors.hpp"
#include "batchai/train/model.hpp"

namespace batchai::train {

std::size_t ParamEntry::size() const {
  std::size_t n = 1;
  for (int d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

ParamTable tutorial_param_table() { return param_table_for(tutorial_network(), 32, 32, 3); }

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

ParamArena::ParamArena(ParamTable t) : table(std::move(t)), values(param_count(table), 0.0f) {}

void export_keras(const ParamArena& arena, std::vector<float>& out) { out = arena.values; }

void import_keras(ParamArena& arena, const std::vector<float>& in) {
  if (in.size() != param_count(arena.table)) {
    throw InvalidArgument("expected " + std::to_string(param_count(arena.table)) + " weights in Keras layout, got " +
                          std::to_string(in.size()) + "; the weights belong to a different network");
  }
  arena.values = in;
}

}  // namespace batchai::train
