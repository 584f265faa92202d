// What a run trains on (train_data.cpp): the options' rank-dependent defaults, the data
// (CIFAR-10 or synthetic) and each rank's image order per epoch.
#pragma once
#include <cstdint>
#include <vector>

#include "batchai/train/train_options.hpp"
#include "data/dataset.hpp"

namespace batchai::train {

int default_epochs(int size);      // ceil(100 / size)
double default_lr(int size);       // 1e-4 * size
// Fills the defaults that depend on the rank count; throws InvalidArgument for bad values.
TrainOptions resolve(const TrainOptions& options, int size);

// In-memory data for a run: CIFAR-10 from disk, or `synthetic` generated images (and a test
// set of max(200, synthetic / 5)) from write_synthetic_cifar10's image generator.
struct TrainData {
  Dataset train, test;
};
TrainData load_train_data(const TrainOptions& options);

// Image order of one rank for one epoch: `steps` batches of at most `batch` dataset indices,
// plus each batch's first augmentation key (the keys count up through a pass's positions).
// Unsharded, as Keras' iterator: the rank's batches are one stream over passes, each a new
// permutation cut into ceil(count / batch) batches with the remainder last, and epoch e is
// batches e * steps .. (e + 1) * steps - 1 of it (a short epoch goes on with the pass the last one
// left). With `shard`, all ranks share one permutation per epoch and rank r takes slice r of each
// global batch of batch * size images. Throws InvalidArgument without images or with a bad batch.
struct EpochPlan {
  std::vector<int> indices;           // concatenated batches
  std::vector<int> batch_begin;       // steps + 1 offsets into indices
  std::vector<std::uint64_t> first_key;  // per batch
};
EpochPlan plan_epoch(int count, int batch, int steps, bool shard, int rank, int size, std::uint64_t seed,
                     int epoch);

}  // namespace batchai::train
