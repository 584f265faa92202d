// Options defaults, the run's data (CIFAR-10 or synthetic) and each rank's epoch plan.
#include "train_data.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "batchai/common/errors.hpp"
#include "batchai/train/backend.hpp"
#include "batchai/train/communicator.hpp"
#include "data/cifar10.hpp"
#include "data/download.hpp"
#include "data/synthetic_cifar10.hpp"

namespace batchai::train {

int default_epochs(int size) { return (100 + size - 1) / size; }
double default_lr(int size) { return 1e-4 * size; }

TrainOptions resolve(const TrainOptions& options, int size) {
  TrainOptions o = options;
  if (o.epochs == 0) o.epochs = default_epochs(size);
  if (o.lr == 0.0) o.lr = default_lr(size);
  if (o.epochs < 0) throw InvalidArgument("--epochs must be positive");
  if (o.batch_size <= 0) throw InvalidArgument("--batch-size must be positive");
  if (o.lr < 0.0) throw InvalidArgument("--lr must be positive");
  if (o.steps_per_epoch < 0) throw InvalidArgument("--steps-per-epoch must be positive");
  if (o.synthetic < 0) throw InvalidArgument("--synthetic must be a positive image count");
  parse_allreduce_algorithm(o.allreduce);  // validates
  parse_backend_kind(o.backend);          // validates
  if (o.threads < 0) throw InvalidArgument("--threads must be positive");
  return o;
}

namespace {
Dataset synthetic_set(int count, std::uint64_t seed) {
  Dataset d;
  d.count = count;
  d.images.resize(static_cast<std::size_t>(count) * kCifarImageBytes);
  d.labels.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    d.labels[i] = static_cast<std::uint8_t>(i % kCifarClasses);
    synthetic_image(i % kCifarClasses, seed + static_cast<std::uint64_t>(i),
                    d.images.data() + static_cast<std::size_t>(i) * kCifarImageBytes);
  }
  return d;
}
}  // namespace

TrainData load_train_data(const TrainOptions& options) {
  TrainData data;
  if (options.synthetic > 0) {
    data.train = synthetic_set(options.synthetic, options.seed * 1000003ULL);
    data.test = synthetic_set(std::max(200, options.synthetic / 5), options.seed * 1000003ULL + (1ULL << 40));
    return data;
  }
  const std::string dir = options.data_dir.empty() ? options.dir + "/data" : options.data_dir;
  const std::string found = ensure_cifar10(dir, options.download);
  data.train = load_cifar10_train(found);
  data.test = load_cifar10_test(found);
  return data;
}

EpochPlan plan_epoch(int count, int batch, int steps, bool shard, int rank, int size, std::uint64_t seed,
                     int epoch) {
  // Sharded ranks share one permutation; unsharded ranks shuffle independently, as separate
  // Keras workers do. Keys are positions in the epoch, offset by the epoch (and rank).
  const std::uint64_t stream = seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(epoch) * 7919 +
                               (shard ? 0 : static_cast<std::uint64_t>(rank) * 104729 + 1);
  std::mt19937_64 rng(stream);
  std::vector<int> perm(static_cast<std::size_t>(count));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  EpochPlan plan;
  const std::uint64_t key_base = (static_cast<std::uint64_t>(epoch) << 32) ^ (shard ? 0 : stream);
  plan.batch_begin.push_back(0);
  // Position in the (cyclically extended) permutation of this step's first image.
  long long pos = 0;
  for (int s = 0; s < steps; ++s) {
    long long stop = 0;
    if (shard) {
      // Speed, not Keras: every global batch is full, wrapping past the permutation's end.
      pos = static_cast<long long>(s) * batch * size + static_cast<long long>(rank) * batch;
      stop = pos + batch;
    } else {
      // Keras' iterator: a pass over the data ends with the remainder (50,000 images in batches of
      // 32: 1,562 full batches and one of 16), and the next batch starts the next pass.
      stop = std::min(pos + batch, (pos / count + 1) * count);
    }
    plan.first_key.push_back(key_base + static_cast<std::uint64_t>(pos));
    for (long long p = pos; p < stop; ++p) plan.indices.push_back(perm[static_cast<std::size_t>(p % count)]);
    plan.batch_begin.push_back(static_cast<int>(plan.indices.size()));
    pos = stop;
  }
  return plan;
}

}  // namespace batchai::train
