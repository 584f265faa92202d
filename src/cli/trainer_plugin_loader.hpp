// Runs `batchai train` through the trainer plugin (batchai/train/trainer_plugin.hpp), loaded from
// the executable's own folder on first use: the executable itself links none of the trainer's
// libraries, so every other command starts without them.
#pragma once
#include <filesystem>

#include "batchai/train/train_options.hpp"

namespace batchai::cli {

// The plugin's path: beside /proc/self/exe, never a search path. Throws SystemError when the
// executable's own path cannot be read.
std::filesystem::path trainer_plugin_path();

// Loads the plugin (once), runs the training and returns its exit code. A missing or broken
// plugin throws SystemError; an error the training raised is rethrown as a batchai::Error with
// the exit code it carried.
int run_trainer_plugin(const train::TrainOptions& options);

}  // namespace batchai::cli
