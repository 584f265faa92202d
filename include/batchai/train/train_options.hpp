// Options of `batchai train` (issue 5), independent of the CLI parser so the trainer, its tests
// and any driver share one definition. Zero/empty values mean "the tutorial's default", which
// depends on the number of ranks (see resolve() in src/train/train_data.hpp).
#pragma once
#include <cstdint>
#include <string>

namespace batchai::train {

struct TrainOptions {
  std::string dir = ".";         // output folder: saved_models/, checkpoints/, metrics.*
  std::string data_dir;          // CIFAR-10 binary folder; empty = <dir>/data or $BATCHAI_CIFAR10_DIR
  bool download = false;         // fetch CIFAR-10 when missing (needs a network)
  int epochs = 0;                // 0 = ceil(100 / size)
  int batch_size = 32;           // per rank
  double lr = 0.0;               // 0 = 1e-4 * size (Horovod scales the rate by the worker count)
  bool augmentation = true;
  bool dropout = true;           // off only in equivalence tests (masks are per-rank draws)
  bool shard = false;            // each rank trains on 1/size of the data per epoch
  std::uint64_t seed = 1;
  std::string backend = "auto";  // cpu | cuda | auto
  int threads = 0;               // 0 = the cores of this host divided by the ranks on it
  std::string timeline;          // Chrome-trace JSON path; empty = off
  bool resume = false;           // continue from <dir>/checkpoints/checkpoint.bin
  std::string evaluate;          // score this saved .h5 on the test set instead of training
  int steps_per_epoch = 0;       // 0 = ceil(train images / batch) (/ size with --shard)
  std::string allreduce = "ring";  // ring | mpi
  // float32 (Keras' default) | mixed_bfloat16: the CPU's convolutions of 16+ input channels take
  // their inputs and kernels rounded to bfloat16 (float32 sums, outputs, weights and optimizer).
  std::string precision = "float32";
  int synthetic = 0;             // > 0: train on this many generated images instead of CIFAR-10
  int validation_images = 0;     // 0 = the whole test set each epoch; > 0 = the first N
  double progress_interval_s = 5.0;  // seconds between progress lines when stdout is no terminal
  bool quiet = false;            // no progress output (tests)
  // The CUDA backend plugin that cuda/auto load, as the executable's composition root chose it
  // (src/cli/compose.cpp); empty: none (only a CUDA backend linked in, as in tests).
  std::string cuda_plugin;
};

constexpr const char* kSavedModelRelPath = "saved_models/keras_cifar10_trained_model.h5";
constexpr const char* kCheckpointRelPath = "checkpoints/checkpoint.bin";

}  // namespace batchai::train
