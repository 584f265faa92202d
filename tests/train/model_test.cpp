// The tutorial model's structure: parameter count, Keras table, Glorot ranges, batch limits; its
// routed poolings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cpu/cpu_backend.hpp"
#include "cpu/cpu_profile.hpp"
#include "model.hpp"
#include "optimizer.hpp"

namespace batchai::train {
namespace {

TEST(Model, TutorialTableMatchesKeras) {
  const ParamTable t = tutorial_param_table();
  EXPECT_EQ(param_count(t), 1250858u);
  ASSERT_EQ(t.size(), 12u);
  EXPECT_EQ(t[0].layer, "conv2d_1");
  EXPECT_EQ(t[0].weight, "kernel:0");
  EXPECT_EQ(t[0].shape, (std::vector<int>{3, 3, 3, 32}));
  EXPECT_EQ(find_param(t, "conv2d_4", "kernel:0").shape, (std::vector<int>{3, 3, 64, 64}));
  EXPECT_EQ(find_param(t, "dense_1", "kernel:0").shape, (std::vector<int>{2304, 512}));
  EXPECT_EQ(find_param(t, "dense_2", "bias:0").shape, (std::vector<int>{10}));
  EXPECT_THROW(find_param(t, "dense_3", "kernel:0"), std::exception);
}

// The tutorial's three Dropout layers: after each pooling (0.25) and after the first Dense (0.5).
TEST(Model, DropoutSitesAreTheTutorialsDropoutLayers) {
  auto be = make_backend(BackendKind::kCpu, 1);
  Model m(*be, tutorial_network(), 1);
  const auto sites = m.dropout_sites();
  ASSERT_EQ(sites.size(), 3u);
  const struct { std::size_t layer, features; float rate; } want[] = {{3, 15 * 15 * 32, 0.25f}, {7, 6 * 6 * 64, 0.25f},
                                                                    {9, 512, 0.5f}};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sites[i].layer, want[i].layer) << i;
    EXPECT_EQ(sites[i].features, want[i].features) << i;
    EXPECT_EQ(sites[i].rate, want[i].rate) << i;
  }
}

// Three steps of the tutorial's network with dropout (and one without), its poolings routed or not
// (Backend::pools_by_routes): the same weights bit for bit, and the same evaluation in between.
TEST(Model, RoutedPoolingsTrainAsTheirSeparatePassesDo) {
  cpu::CpuBackend be(2);
  std::vector<float> images(4u * 32 * 32 * 3);
  for (std::size_t i = 0; i < images.size(); ++i) images[i] = static_cast<float>((i * 7919) % 256) / 255.0f;
  const std::vector<float> labels = {1, 3, 5, 7};
  std::vector<float> weights[2];
  double loss[2] = {0, 0};
  for (const bool routed : {false, true}) {
    be.allow_pool_routes(routed);
    cpu::CpuProfile profile;  // which passes ran
    be.set_profile(&profile);
    Model model(be, tutorial_network(), 4);
    model.init_glorot(1);
    RmsProp opt(model, RmsPropConfig{});
    for (int step = 0; step < 4; ++step) {
      model.train_batch(images.data(), labels.data(), 4, step != 2, 2, static_cast<std::uint64_t>(step) * 4);
      opt.step();
      loss[routed] += model.evaluate_batch(images.data(), labels.data(), 4).loss_sum;
    }
    weights[routed] = model.get_params();
    be.set_profile(nullptr);
    long pooled_dropouts = 0, dropouts = 0;
    for (const auto& e : profile.entries()) {
      if (e.op == "maxpool" && e.phase == "fwd+dropout") pooled_dropouts += e.calls;
      if (e.op == "dropout" && e.phase == "fwd") dropouts += e.calls;
    }
    // Three steps with dropout: two poolings each did theirs, dense_1's dropout did its own.
    EXPECT_EQ(pooled_dropouts, routed ? 6 : 0);
    EXPECT_EQ(dropouts, routed ? 3 : 9);
  }
  be.allow_pool_routes(true);
  EXPECT_EQ(loss[1], loss[0]);
  ASSERT_EQ(weights[1].size(), weights[0].size());
  EXPECT_EQ(std::memcmp(weights[1].data(), weights[0].data(), weights[0].size() * sizeof(float)), 0);
}

TEST(Model, SetParamsRefusesAnotherNetworksWeights) {
  auto be = make_backend(BackendKind::kCpu, 1);
  Model m(*be, tutorial_network(), 1);
  std::vector<float> p(m.param_count());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<float>(i % 97);
  m.set_params(p);
  EXPECT_EQ(m.get_params(), p);  // the arena is in Keras layout: saved and loaded as it is
  p.pop_back();
  EXPECT_THROW(m.set_params(p), std::exception);
}

TEST(Model, GlorotUniformKernelsZeroBiases) {
  auto be = make_backend(BackendKind::kCpu, 1);
  Model m(*be, tutorial_network(), 4);
  m.init_glorot(1);
  const auto p = m.get_params();
  for (const auto& e : m.table()) {
    float lo = 0, hi = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
      lo = std::min(lo, p[e.offset + i]);
      hi = std::max(hi, p[e.offset + i]);
    }
    if (e.weight == "bias:0") {
      EXPECT_EQ(lo, 0.0f);
      EXPECT_EQ(hi, 0.0f);
    } else {
      const double r = e.shape.size() == 4 ? 9.0 : 1.0;
      const double limit = std::sqrt(6.0 / (r * e.shape[e.shape.size() - 2] + r * e.shape.back()));
      EXPECT_LE(hi, limit);
      EXPECT_GE(lo, -limit);
      EXPECT_GT(hi, 0.9 * limit) << e.layer;
    }
  }
}

TEST(Model, RejectsOversizedBatch) {
  auto be = make_backend(BackendKind::kCpu, 1);
  Model m(*be, tutorial_network(), 2);
  std::vector<float> x(3 * 32 * 32 * 3, 0.5f), y(3, 1.0f);
  EXPECT_THROW(m.train_batch(x.data(), y.data(), 3, false, 0, 0), std::exception);
  const BatchStats s = m.evaluate_batch(x.data(), y.data(), 2);
  EXPECT_EQ(s.count, 2);
  EXPECT_GT(s.loss_sum, 0.0);
}

TEST(Model, CudaBackendAbsentIsAClearError) {
  try {
    make_backend(BackendKind::kCuda, 1);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA backend not built"), std::string::npos);
  }
  EXPECT_EQ(make_backend(BackendKind::kAuto, 1)->name(), "cpu");
}

}  // namespace
}  // namespace batchai::train
