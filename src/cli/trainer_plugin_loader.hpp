// Runs `batchai train` through the trainer plugin (batchai/train/trainer_plugin.hpp), loaded from
// where the composition root located it, on first use: the executable itself links none of the
// trainer's libraries, so every other command starts without them.
#pragma once
#include "batchai/train/train_options.hpp"
#include "cli_context.hpp"

namespace batchai::cli {

// Loads the trainer plugin (once), hands it the CUDA plugin's path in the options, runs the
// training and returns its exit code. A missing or broken plugin throws SystemError; an error
// the training raised is rethrown as a batchai::Error with the exit code it carried.
int run_trainer_plugin(const PluginPaths& plugins, train::TrainOptions options);

}  // namespace batchai::cli
