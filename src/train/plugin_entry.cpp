// The entry point of libbatchai_trainer.so (see batchai/train/trainer_plugin.hpp): the executable
// dlopens this plugin only for `batchai train`, so the trainer's libraries load only then.
#include "batchai/common/plugin_guard.hpp"
#include "trainer.hpp"
#include "batchai/train/trainer_plugin.hpp"

extern "C" __attribute__((visibility("default"))) int batchai_trainer_main(
    int abi, std::size_t options_size, const batchai::train::TrainOptions* options,
    batchai::train::TrainerPluginError* error) {
  using batchai::train::kTrainerPluginAbi;
  if (abi != kTrainerPluginAbi || options_size != sizeof(batchai::train::TrainOptions) || options == nullptr ||
      error == nullptr)
    return batchai::train::kTrainerPluginAbiMismatch;
  // Exceptions stay on this side: their type information is hidden in this plugin.
  return batchai::run_guarded(*error, "the training", [&] { return batchai::train::run_train_main(*options); });
}
