// The parameter table of the trainer: which named Keras weight lives where in the one contiguous
// float arena that holds all parameters (and, with the same offsets, all gradients). HDF5 export,
// checkpoints and the allreduce see parameters only through this table. The arena's layout is
// Keras' own: Conv2D kernel (kh, kw, in, out), Dense kernel (in, out), bias (out), so the
// Model's parameters are saved and loaded as they are. network.hpp derives the table.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace batchai::train {

struct ParamEntry {
  std::string layer;       // Keras layer name, e.g. "conv2d_1", "dense_2"
  std::string weight;      // "kernel:0" or "bias:0"
  std::vector<int> shape;  // Keras shape, e.g. {3, 3, 3, 32} or {32}
  std::size_t offset;      // first float of this weight in the arena
  std::size_t size() const;  // product of shape
};

using ParamTable = std::vector<ParamEntry>;

// Table of the tutorial's cifar10_cnn (network.hpp): conv2d_1..4, dense_1..2, each kernel then
// bias, packed back to back in this order (1,250,858 floats).
ParamTable tutorial_param_table();
// Total floats covered by a table (offset + size of its last entry).
std::size_t param_count(const ParamTable& table);
// Entry by layer and weight name; throws batchai::NotFound naming the missing weight.
const ParamEntry& find_param(const ParamTable& table, const std::string& layer,
                             const std::string& weight);

}  // namespace batchai::train
