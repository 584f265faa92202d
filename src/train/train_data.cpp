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
  parse_precision(o.precision);           // validates
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

namespace {
// A rank's permutation of the data for one pass (unsharded) or one epoch (sharded: every rank
// shuffles alike), and the base its images' augmentation keys count from.
struct Shuffle {
  std::vector<int> perm;
  std::uint64_t key_base = 0;
};

Shuffle shuffle_for(int count, bool shard, int rank, std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t stream = seed * 0x9e3779b97f4a7c15ULL + index * 7919 +
                               (shard ? 0 : static_cast<std::uint64_t>(rank) * 104729 + 1);
  std::mt19937_64 rng(stream);
  Shuffle s;
  s.perm.resize(static_cast<std::size_t>(count));
  std::iota(s.perm.begin(), s.perm.end(), 0);
  std::shuffle(s.perm.begin(), s.perm.end(), rng);
  s.key_base = (index << 32) ^ (shard ? 0 : stream);
  return s;
}
}  // namespace

EpochPlan plan_epoch(int count, int batch, int steps, bool shard, int rank, int size, std::uint64_t seed,
                     int epoch) {
  if (count <= 0 || batch <= 0 || steps < 0 || epoch < 0) {
    throw InvalidArgument("an epoch plan needs images, a positive batch and a step count");
  }
  EpochPlan plan;
  plan.batch_begin.push_back(0);
  const auto take = [&plan](const Shuffle& from, long long pos, long long stop) {
    plan.first_key.push_back(from.key_base + static_cast<std::uint64_t>(pos));
    for (long long p = pos; p < stop; ++p) plan.indices.push_back(from.perm[static_cast<std::size_t>(p % from.perm.size())]);
    plan.batch_begin.push_back(static_cast<int>(plan.indices.size()));
  };
  if (shard) {
    // Speed, not Keras: every global batch is full, wrapping past the permutation's end.
    const Shuffle s = shuffle_for(count, true, rank, seed, static_cast<std::uint64_t>(epoch));
    for (int step = 0; step < steps; ++step) {
      const long long pos = static_cast<long long>(step) * batch * size + static_cast<long long>(rank) * batch;
      take(s, pos, pos + batch);
    }
    return plan;
  }
  // Keras' iterator: one stream of batches over passes, each pass a new permutation cut into
  // ceil(count / batch) batches, the last holding the remainder (50,000 images in batches of 32:
  // 1,562 full and one of 16). Epochs are consecutive runs of `steps` batches of that stream, so a
  // shorter epoch goes on with the pass the last one was in, and a longer one starts the next pass.
  const long long per_pass = (static_cast<long long>(count) + batch - 1) / batch;
  Shuffle s;
  long long pass = -1;
  for (long long g = static_cast<long long>(epoch) * steps, end = g + steps; g < end; ++g) {
    if (g / per_pass != pass) {
      pass = g / per_pass;
      s = shuffle_for(count, false, rank, seed, static_cast<std::uint64_t>(pass));
    }
    const long long pos = (g % per_pass) * batch;
    take(s, pos, std::min(pos + batch, static_cast<long long>(count)));
  }
  return plan;
}

}  // namespace batchai::train
