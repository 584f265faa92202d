// Training checkpoints for --resume: epoch, global step, RNG seed/state, parameters and the
// optimizer's accumulators in one binary file, written atomically (temp file + rename) and
// sealed with a SHA-256 so a torn or truncated file is rejected instead of half-loaded.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace batchai::train {

struct Checkpoint {
  int epoch = 0;                 // epochs completed
  long long global_step = 0;     // optimizer steps taken (drives the lr decay)
  std::uint64_t seed = 0;        // the run's base seed
  std::string rng_state;         // opaque RNG state (e.g. a std::mt19937_64 written with <<)
  std::vector<float> params;     // Keras layout, table order (the Model's arena)
  std::vector<float> optimizer_state;  // RMSprop accumulators, same layout as params
  std::map<std::string, std::string> extra;  // free-form (model name, options) for checks
};

// Writes `path` + ".tmp", flushes it to disk and renames it over `path`.
// Throws SystemError when the file cannot be written.
void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);

// Throws NotFound when missing and InvalidArgument (saying the file is torn or corrupt and
// what to do) when the magic, header, length or checksum do not match.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace batchai::train
