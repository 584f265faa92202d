// `batchai train`: the built-in Horovod-style CIFAR-10 trainer (issue 5). Parses the options
// into batchai::train::TrainOptions and runs the trainer; under mpirun every rank runs this same
// command. Registered like every command (commands/registry.cpp); its options are typed CLI11
// options read as given (ArgumentStyle::kNative); the trainer plugin (trainer_plugin_loader.hpp)
// runs the training and its code is the exit code.
#include "commands/train_command.hpp"

#include <CLI/CLI.hpp>
#include <memory>

#include "batchai/train/train_options.hpp"
#include "command.hpp"
#include "trainer_plugin_loader.hpp"

namespace batchai::cli {

void register_train_command(CLI::App& root, CliContext& ctx) {
  auto o = std::make_shared<train::TrainOptions>();
  Command& command = add_command(
      root, ctx, "train", "Train the tutorial's Keras CIFAR-10 CNN, data-parallel over MPI ranks (Horovod semantics).");
  command.arguments(ArgumentStyle::kNative);
  CLI::App* cmd = &command.app();
  cmd->add_option("--dir", o->dir, "Output folder (saved_models/, checkpoints/, metrics.*)")->capture_default_str();
  cmd->add_option("--data-dir", o->data_dir,
                  "Folder with the CIFAR-10 binary files (data_batch_1..5.bin, test_batch.bin); "
                  "default <dir>/data or $BATCHAI_CIFAR10_DIR");
  cmd->add_flag("--download", o->download, "Download CIFAR-10 into the data folder when it is missing");
  cmd->add_option("--epochs", o->epochs, "Epochs (default ceil(100 / ranks))")->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch-size", o->batch_size, "Images per rank per step")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--lr", o->lr, "Learning rate (default 1e-4 * ranks)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-augmentation{false}", o->augmentation, "Turn off random shifts and flips");
  cmd->add_flag("--shard", o->shard,
                "Each rank trains on 1/ranks of the images per epoch (with one rank's --lr and "
                "--batch-size / ranks: exactly one rank's steps)");
  cmd->add_option("--seed", o->seed, "Seed of weights, shuffling, augmentation and dropout")->capture_default_str();
  cmd->add_option("--backend", o->backend, "Compute backend")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--threads", o->threads, "CPU threads per rank (default: cores / ranks on this host)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeline", o->timeline, "Write a Chrome-trace timeline of the steps to FILE");
  cmd->add_flag("--resume", o->resume, "Continue from <dir>/checkpoints/checkpoint.bin");
  cmd->add_option("--evaluate", o->evaluate, "Score a saved Keras .h5 model on the test set and exit");
  cmd->add_option("--steps-per-epoch", o->steps_per_epoch, "Override the steps per epoch (tests, CI)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--allreduce", o->allreduce,
                  "Gradient allreduce: ring (ours: shared memory within a host, ring across hosts) or mpi (MPI_Allreduce)")
      ->capture_default_str()
      ->check(CLI::IsMember({"ring", "mpi"}));
  cmd->add_option("--precision", o->precision,
                  "float32 (Keras' default) or mixed_bfloat16: convolutions of 16+ input channels on bfloat16 inputs "
                  "and kernels, float32 sums, weights and optimizer (CPUs with AVX512-BF16 or AMX)")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "mixed_bfloat16"}));
  cmd->add_option("--synthetic", o->synthetic, "Train on N generated images instead of CIFAR-10 (CI)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--validation-images", o->validation_images,
                  "Validate each epoch on the first N test images (default: all)")
      ->check(CLI::NonNegativeNumber);
  // Every MPI rank runs this same command; main turns the trainer's code into the exit code.
  command.handler([o, &ctx](const Args&) { return CommandResult::exit_code_only(run_trainer_plugin(ctx.plugins(), *o)); });
}

}  // namespace batchai::cli
