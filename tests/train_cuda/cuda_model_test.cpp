// One whole training step of the tutorial network on the CUDA backend against the CPU backend:
// same Glorot seed, same batch, same dropout seed; loss, accuracy, every gradient tensor and
// the parameters after an RMSprop update must agree.
#include <gtest/gtest.h>

#include <string>

#include "model.hpp"
#include "cuda_test_util.hpp"

namespace batchai::train_cuda::testing {
namespace {

TEST_F(CudaVsCpu, TutorialTrainingStepMatchesCpu) {
  const int batch = 16;
  train::Model cpu_model(*cpu_, train::tutorial_network(), batch);
  train::Model gpu_model(*gpu_, train::tutorial_network(), batch);
  cpu_model.init_glorot(2018);
  gpu_model.init_glorot(2018);
  ASSERT_EQ(gpu_model.get_params(), cpu_model.get_params());

  const auto x = random_vector(static_cast<std::size_t>(batch) * gpu_model.input_size(), 31, 0.0f, 1.0f);
  std::vector<float> labels(batch);
  for (int i = 0; i < batch; ++i) labels[static_cast<std::size_t>(i)] = static_cast<float>((i * 3) % 10);

  const auto cs = cpu_model.train_batch(x.data(), labels.data(), batch, true, 99, 5);
  const auto gs = gpu_model.train_batch(x.data(), labels.data(), batch, true, 99, 5);
  EXPECT_NEAR(gs.loss_sum, cs.loss_sum, 1e-4 * cs.loss_sum);
  EXPECT_EQ(gs.correct, cs.correct);
  EXPECT_EQ(gs.count, batch);

  const auto cg = cpu_model.get_grads(), gg = gpu_model.get_grads();
  EXPECT_LT(relative_error(gg, cg), kTolerance) << "whole gradient arena";
  // Per tensor a ReLU that flips on a rounding difference can move one value more, so a
  // looser bound catches layout mistakes (which give O(1) errors) without flaking.
  for (const auto& e : cpu_model.table()) {
    const std::vector<float> a(gg.begin() + e.offset, gg.begin() + e.offset + e.size());
    const std::vector<float> b(cg.begin() + e.offset, cg.begin() + e.offset + e.size());
    EXPECT_LT(relative_error(a, b), 1e-3) << e.layer << "/" << e.weight;
  }

  // The optimiser step on each backend's own arenas.
  train::Buffer cpu_ms = cpu_->allocate(cpu_model.param_count());
  train::Buffer gpu_ms = gpu_->allocate(gpu_model.param_count());
  cpu_->rmsprop_update(cpu_model.params(), cpu_model.grads(), cpu_ms, 1e-4f, 0.9f, 1e-7f);
  gpu_->rmsprop_update(gpu_model.params(), gpu_model.grads(), gpu_ms, 1e-4f, 0.9f, 1e-7f);
  EXPECT_LT(relative_error(gpu_model.get_params(), cpu_model.get_params()), kTolerance);
  cpu_->release(cpu_ms);
  gpu_->release(gpu_ms);

  // Evaluation (no dropout, no gradients) after the update.
  const auto ce = cpu_model.evaluate_batch(x.data(), labels.data(), batch);
  const auto ge = gpu_model.evaluate_batch(x.data(), labels.data(), batch);
  EXPECT_NEAR(ge.loss_sum, ce.loss_sum, 1e-4 * ce.loss_sum);
  EXPECT_LT(relative_error(gpu_model.logits(batch), cpu_model.logits(batch)), kTolerance);
}

// With deterministic algorithms (the default) a backend gives the same step the same bits every
// time, in either layout cuDNN convolves in (a new process may measure and pick other algorithms:
// BATCHAI_CUDNN_FIND=0 fixes the choice too); the two layouts agree to fp32 rounding.
TEST_F(CudaVsCpu, TrainingStepRepeatsBitForBitInEachLayout) {
  const int batch = 64;  // more rows than one block of the bias gradient folds
  std::vector<std::vector<float>> grads_by_layout;
  for (const auto layout : {ConvLayout::kNhwc, ConvLayout::kNchw}) {
    CudaBackendOptions options;
    options.allow_tf32 = false;
    options.conv_layout = layout;
    auto backend = make_cuda_backend(options);
    std::vector<std::vector<float>> runs;
    for (int run = 0; run < 2; ++run) {
      train::Model model(*backend, train::tutorial_network(), batch);
      model.init_glorot(7);
      const auto x = random_vector(static_cast<std::size_t>(batch) * model.input_size(), 41, 0.0f, 1.0f);
      std::vector<float> labels(batch);
      for (int i = 0; i < batch; ++i) labels[static_cast<std::size_t>(i)] = static_cast<float>(i % 10);
      model.train_batch(x.data(), labels.data(), batch, true, 5, 3);
      runs.push_back(model.get_grads());
    }
    EXPECT_EQ(runs[0], runs[1]) << (layout == ConvLayout::kNhwc ? "NHWC" : "NCHW");
    grads_by_layout.push_back(runs[0]);
  }
  EXPECT_LT(relative_error(grads_by_layout[0], grads_by_layout[1]), kTolerance);
}

TEST_F(CudaVsCpu, PartialBatchesReuseBuffers) {
  // Batches smaller than the model's maximum (the last batch of an epoch) take new cuDNN plans.
  train::Model cpu_model(*cpu_, train::tutorial_network(), 8);
  train::Model gpu_model(*gpu_, train::tutorial_network(), 8);
  cpu_model.init_glorot(7);
  gpu_model.init_glorot(7);
  const auto x = random_vector(static_cast<std::size_t>(8) * gpu_model.input_size(), 32, 0.0f, 1.0f);
  const std::vector<float> labels{1, 2, 3, 4, 5, 6, 7, 8};
  for (const int n : {8, 3, 8}) {
    const auto cs = cpu_model.train_batch(x.data(), labels.data(), n, false, 0, 0);
    const auto gs = gpu_model.train_batch(x.data(), labels.data(), n, false, 0, 0);
    EXPECT_NEAR(gs.loss_sum, cs.loss_sum, 1e-4 * cs.loss_sum) << "n=" << n;
    EXPECT_LT(relative_error(gpu_model.get_grads(), cpu_model.get_grads()), kTolerance) << "n=" << n;
  }
}

}  // namespace
}  // namespace batchai::train_cuda::testing
