// The training loop end to end on synthetic data: it learns, --resume continues exactly where
// an uninterrupted run would be, the saved model scores the same when evaluated, sharded epoch
// plans partition the global batch, unsharded ones are Keras' stream of batches over passes (the
// remainder last, short epochs going on with the pass), and the options' rank-dependent defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "batchai/common/errors.hpp"
#include "batchai/train/local_communicator.hpp"
#include "cpu/dnnl_memory.hpp"
#include "support/temp_dir.hpp"
#include "train_data.hpp"
#include "trainer.hpp"

namespace batchai::train {
namespace {

namespace fs = std::filesystem;

TrainOptions small_run(const fs::path& dir) {
  TrainOptions o;
  o.dir = dir.string();
  o.synthetic = 640;
  o.threads = 2;
  o.quiet = true;
  o.validation_images = 100;
  return o;
}

TEST(Trainer, SyntheticRunLearnsWellAboveChance) {
  const test::TempDir tmp("batchai-trainer-test");
  const fs::path& dir = tmp.path();
  TrainOptions o = small_run(dir);
  o.epochs = 3;
  o.steps_per_epoch = 40;  // 120 steps of 32 images
  o.lr = 5e-4;
  auto comm = make_local_communicator();
  std::ostringstream out;
  const TrainResult r = run_training(o, *comm, out);
  EXPECT_EQ(r.epochs_run, 3);
  EXPECT_EQ(r.global_step, 120);
  EXPECT_GT(r.test_acc, 0.5) << "synthetic classes should be easy; chance is 0.1";
  EXPECT_TRUE(fs::exists(dir / kSavedModelRelPath));
  EXPECT_TRUE(fs::exists(dir / kCheckpointRelPath));
  EXPECT_TRUE(fs::exists(dir / "metrics.csv"));

  // --evaluate on the saved model reproduces the final test score.
  TrainOptions e = small_run(dir);
  e.evaluate = (dir / kSavedModelRelPath).string();
  std::ostringstream eval_out;
  const TrainResult scored = run_evaluation(e, *comm, eval_out);
  EXPECT_NEAR(scored.test_loss, r.test_loss, 1e-5);
  EXPECT_NEAR(scored.test_acc, r.test_acc, 1e-9);
  EXPECT_NE(eval_out.str().find("Test loss: "), std::string::npos);
  EXPECT_NE(eval_out.str().find("Test accuracy: "), std::string::npos);
}

TEST(Trainer, ResumeContinuesExactlyFromTheCheckpoint) {
  auto comm = make_local_communicator();
  const test::TempDir whole_tmp("batchai-trainer-test"), split_tmp("batchai-trainer-test");
  const fs::path &whole = whole_tmp.path(), &split = split_tmp.path();
  TrainOptions o = small_run(whole);
  o.epochs = 2;
  o.steps_per_epoch = 4;
  std::ostringstream sink;
  const TrainResult uninterrupted = run_training(o, *comm, sink);

  TrainOptions first = small_run(split);
  first.epochs = 1;
  first.steps_per_epoch = 4;
  run_training(first, *comm, sink);
  TrainOptions second = first;
  second.epochs = 2;
  second.resume = true;
  second.quiet = false;
  std::ostringstream out;
  const TrainResult resumed = run_training(second, *comm, out);
  EXPECT_NE(out.str().find("Resuming from"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("Epoch 2/2"), std::string::npos);
  EXPECT_EQ(out.str().find("Epoch 1/2"), std::string::npos);
  EXPECT_EQ(resumed.epochs_run, 1);
  EXPECT_EQ(resumed.global_step, 8);
  ASSERT_EQ(resumed.params.size(), uninterrupted.params.size());
  double max_diff = 0.0;
  for (std::size_t i = 0; i < resumed.params.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(resumed.params[i] - uninterrupted.params[i])));
  }
  EXPECT_LT(max_diff, 1e-6);
  std::ifstream csv(split / "metrics.csv");
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) rows += line.empty() ? 0 : 1;
  EXPECT_EQ(rows, 3);  // header + two epochs across the two runs
}

TEST(Trainer, ResumeWithoutCheckpointStartsFresh) {
  const test::TempDir tmp("batchai-trainer-test");
  const fs::path& dir = tmp.path();
  TrainOptions o = small_run(dir);
  o.epochs = 1;
  o.steps_per_epoch = 1;
  o.resume = true;
  o.quiet = false;
  auto comm = make_local_communicator();
  std::ostringstream out;
  const TrainResult r = run_training(o, *comm, out);
  EXPECT_NE(out.str().find("No checkpoint at"), std::string::npos);
  EXPECT_EQ(r.epochs_run, 1);
}

TEST(Trainer, ShardedPlansPartitionTheGlobalBatch) {
  const int count = 100, batch = 4, size = 3, steps = 5;
  const EpochPlan one = plan_epoch(count, batch * size, steps, true, 0, 1, 9, 2);
  for (int rank = 0; rank < size; ++rank) {
    const EpochPlan part = plan_epoch(count, batch, steps, true, rank, size, 9, 2);
    for (int s = 0; s < steps; ++s) {
      for (int k = 0; k < batch; ++k) {
        EXPECT_EQ(part.indices[part.batch_begin[s] + k], one.indices[one.batch_begin[s] + rank * batch + k]);
      }
      EXPECT_EQ(part.first_key[s], one.first_key[s] + static_cast<std::uint64_t>(rank * batch));
    }
  }
  // Unsharded ranks shuffle independently.
  EXPECT_NE(plan_epoch(count, batch, steps, false, 0, 2, 9, 2).indices,
            plan_epoch(count, batch, steps, false, 1, 2, 9, 2).indices);
}

TEST(Trainer, UnshardedPlansCutAPassAsKerasDoes) {
  // 100 images in batches of 32: three full batches and the remainder of 4 make one pass, each
  // image once; the next step starts the next pass, a new permutation.
  const int count = 100, batch = 32;
  const EpochPlan plan = plan_epoch(count, batch, 8, false, 1, 4, 9, 0);
  const std::vector<int> sizes = {32, 32, 32, 4, 32, 32, 32, 4};
  ASSERT_EQ(plan.batch_begin.size(), sizes.size() + 1);
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    EXPECT_EQ(plan.batch_begin[s + 1] - plan.batch_begin[s], sizes[s]) << "step " << s;
    const int in_pass = plan.batch_begin[s] % count;
    EXPECT_EQ(plan.first_key[s] - plan.first_key[s < 4 ? 0 : 4], static_cast<std::uint64_t>(in_pass)) << "step " << s;
  }
  for (int p = 0; p < 2; ++p) {
    std::vector<int> pass(plan.indices.begin() + p * count, plan.indices.begin() + (p + 1) * count);
    std::sort(pass.begin(), pass.end());
    for (int i = 0; i < count; ++i) EXPECT_EQ(pass[static_cast<std::size_t>(i)], i) << "pass " << p;
  }
  EXPECT_FALSE(std::equal(plan.indices.begin() + count, plan.indices.end(), plan.indices.begin()));
  EXPECT_NE(plan.first_key[4], plan.first_key[0] + static_cast<std::uint64_t>(count));
  // The tutorial's epoch: 1,563 steps of 32 over 50,000 images end with a batch of 16.
  const EpochPlan tutorial = plan_epoch(50000, 32, 1563, false, 0, 4, 1, 0);
  EXPECT_EQ(tutorial.indices.size(), 50000u);
  EXPECT_EQ(tutorial.batch_begin[1563] - tutorial.batch_begin[1562], 16);
}

TEST(Trainer, ShortUnshardedEpochsGoOnWithThePass) {
  // Keras' iterator runs on across epochs: four epochs of 3 steps are the first 12 batches of
  // one stream (keys and images), whatever the epoch length; pass 1 is the same in both.
  const int count = 100, batch = 32;
  const EpochPlan whole = plan_epoch(count, batch, 12, false, 2, 4, 5, 0);
  std::vector<int> indices;
  std::vector<std::uint64_t> keys;
  for (int e = 0; e < 4; ++e) {
    const EpochPlan part = plan_epoch(count, batch, 3, false, 2, 4, 5, e);
    indices.insert(indices.end(), part.indices.begin(), part.indices.end());
    keys.insert(keys.end(), part.first_key.begin(), part.first_key.end());
  }
  EXPECT_EQ(indices, whole.indices);
  EXPECT_EQ(keys, whole.first_key);
  const EpochPlan second = plan_epoch(count, batch, 4, false, 2, 4, 5, 1);
  EXPECT_TRUE(std::equal(second.indices.begin(), second.indices.end(), whole.indices.begin() + count));
  EXPECT_TRUE(std::equal(second.first_key.begin(), second.first_key.end(), whole.first_key.begin() + 4));
  // Epoch 1 of 3 steps holds the pass's remainder (step 3 of the stream) and the next pass's first two.
  const EpochPlan with_remainder = plan_epoch(count, batch, 3, false, 2, 4, 5, 1);
  EXPECT_EQ(with_remainder.batch_begin, (std::vector<int>{0, 4, 36, 68}));
  EXPECT_THROW(plan_epoch(0, batch, 3, false, 0, 1, 5, 0), InvalidArgument);
  EXPECT_THROW(plan_epoch(count, 0, 3, false, 0, 1, 5, 0), InvalidArgument);
}

// --precision mixed_bfloat16 (convolutions on bfloat16 inputs) learns as well on the same task,
// and is not float32 under another name: the same run's loss differs.
TEST(Trainer, MixedBfloat16RunLearnsWellAboveChance) {
  if (!cpu::onednn_runs_bf16()) GTEST_SKIP() << "oneDNN runs no bfloat16 kernels here";
  const test::TempDir tmp("batchai-trainer-test");
  auto comm = make_local_communicator();
  std::ostringstream out;
  TrainResult r[2];
  for (int i = 0; i < 2; ++i) {
    TrainOptions o = small_run(tmp.path() / std::to_string(i));
    o.epochs = 3;
    o.steps_per_epoch = 40;
    o.lr = 5e-4;
    o.precision = i == 0 ? "float32" : "mixed_bfloat16";
    r[i] = run_training(o, *comm, out);
  }
  EXPECT_GT(r[1].test_acc, 0.5) << "synthetic classes should be easy; chance is 0.1";
  EXPECT_LT(r[1].test_loss, 0.5) << "chance is 2.3; float32 here " << r[0].test_loss << ", acc " << r[0].test_acc
                                 << " against " << r[1].test_acc;
  EXPECT_NE(r[1].test_loss, r[0].test_loss);
}

TEST(TrainOptions, DefaultsFollowTheTutorial) {
  TrainOptions o;
  EXPECT_EQ(o.batch_size, 32);
  EXPECT_EQ(o.precision, "float32");
  EXPECT_TRUE(o.augmentation);
  EXPECT_EQ(o.allreduce, "ring");
  const TrainOptions one = resolve(o, 1);
  EXPECT_EQ(one.epochs, 100);
  EXPECT_DOUBLE_EQ(one.lr, 1e-4);
  const TrainOptions four = resolve(o, 4);
  EXPECT_EQ(four.epochs, 25);
  EXPECT_DOUBLE_EQ(four.lr, 4e-4);
  EXPECT_EQ(resolve(o, 3).epochs, 34);
  TrainOptions explicit_values = o;
  explicit_values.epochs = 7;
  explicit_values.lr = 0.01;
  EXPECT_EQ(resolve(explicit_values, 4).epochs, 7);
  EXPECT_DOUBLE_EQ(resolve(explicit_values, 4).lr, 0.01);
  TrainOptions bad = o;
  bad.allreduce = "tree";
  EXPECT_THROW(resolve(bad, 1), std::exception);
  bad = o;
  bad.backend = "tpu";
  EXPECT_THROW(resolve(bad, 1), std::exception);
  bad = o;
  bad.precision = "float16";
  EXPECT_THROW(resolve(bad, 1), std::exception);
}

TEST(Trainer, MissingDataIsAClearError) {
  const test::TempDir tmp("batchai-trainer-test");
  const fs::path& dir = tmp.path();
  TrainOptions o;
  o.dir = dir.string();
  o.data_dir = (dir / "nothing-here").string();
  o.quiet = true;
  auto comm = make_local_communicator();
  std::ostringstream out;
  try {
    ::unsetenv("BATCHAI_CIFAR10_DIR");
    run_training(o, *comm, out);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("CIFAR-10"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace batchai::train
