// The trainer plugin's ABI (docs/architecture.md): `batchai train` parses its options in the
// executable and hands them to libbatchai_trainer.so, loaded only then, so that no other command
// maps oneDNN, OpenBLAS, OpenMP, Open MPI, HDF5 or libcurl. Plain data only crosses the boundary.
#pragma once
#include <cstddef>
#include <string>

#include "batchai/train/train_options.hpp"

namespace batchai::train {

// The plugin's file name; the composition root looks for it beside the executable only.
constexpr const char* kTrainerPluginFile = "libbatchai_trainer.so";
// Its one exported symbol, of type TrainerPluginEntry.
constexpr const char* kTrainerPluginEntry = "batchai_trainer_main";
// Raised whenever TrainOptions, TrainerPluginError or the entry's signature change.
constexpr int kTrainerPluginAbi = 3;  // 2: TrainOptions::cuda_plugin; 3: TrainOptions::precision
// What the entry returns, touching nothing else, when `abi` or `options_size` is not its own.
constexpr int kTrainerPluginAbiMismatch = -1;

// The CUDA backend's plugin, beside the executable too (its entry: batchai/train/backend.hpp);
// the composition root passes its path in TrainOptions::cuda_plugin.
constexpr const char* kCudaPluginFile = "libbatchai_cuda.so";

// What the entry reports when the training threw: exceptions do not cross the boundary; the
// executable turns this back into a batchai::Error with the same exit code (main reports it).
struct TrainerPluginError {
  bool thrown = false;
  int exit_code = 1;
  std::string code = "Error";  // batchai::Error::code(), e.g. "Error"
  std::string message;
};

// Runs the whole `batchai train` for this process (run_train_main) and returns its exit code.
// `abi` and `options_size` guard against a plugin built from another batchai.
using TrainerPluginEntry = int (*)(int abi, std::size_t options_size, const TrainOptions* options,
                                   TrainerPluginError* error);

}  // namespace batchai::train
