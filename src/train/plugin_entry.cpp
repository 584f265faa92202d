// The entry point of libbatchai_trainer.so (see batchai/train/trainer_plugin.hpp): the executable
// dlopens this plugin only for `batchai train`, so the trainer's libraries load only then.
#include <exception>
#include <new>

#include "batchai/common/errors.hpp"
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
  try {
    return batchai::train::run_train_main(*options);
  } catch (const batchai::Error& e) {
    *error = {true, e.exit_code(), e.code(), e.what()};
  } catch (const std::bad_alloc&) {
    *error = {true, 1, "Error", "Out of memory: the training needed more memory than this machine could give."};
  } catch (const std::exception& e) {
    *error = {true, 1, "Error", e.what()};
  } catch (...) {
    *error = {true, 1, "Error", "the trainer failed with an unknown exception"};
  }
  return error->exit_code;
}
