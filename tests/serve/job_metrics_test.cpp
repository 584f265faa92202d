// The dashboard's reading of a job's metrics (ui/job_metrics.hpp): Keras' progress lines and the
// trainer's metrics.json, both text a job wrote.
#include <gtest/gtest.h>

#include <string>

#include "ui/job_metrics.hpp"

namespace batchai::serve {
namespace {

TEST(JobMetrics, KerasLinesGiveEachEpochsLastProgressLine) {
  const std::string out =
      "Epoch 1/2\n"
      "  32/50000 [..] - ETA: 9s - loss: 2.3000 - acc: 0.1000\n"
      "50000/50000 [==] - 30s 600us/step - loss: 1.9000 - acc: 0.3000 - val_loss: 1.7000 - val_acc: 0.4000\r\n"
      "Epoch 2/2\n"
      "50000/50000 [==] - 30s - val_loss: 1.4000 - val_accuracy: 0.5000 - loss: 1.5000 - accuracy: 0.4500 - lr: 1e-4\n";
  const auto epochs = parse_keras(out);
  ASSERT_EQ(epochs.size(), 2u);
  EXPECT_EQ(epochs[0].epoch, 1);
  EXPECT_DOUBLE_EQ(*epochs[0].v[0], 1.9);  // loss, not val_loss's 1.7
  EXPECT_DOUBLE_EQ(*epochs[0].v[1], 0.3);
  EXPECT_DOUBLE_EQ(*epochs[0].v[2], 1.7);
  EXPECT_DOUBLE_EQ(*epochs[0].v[3], 0.4);
  EXPECT_FALSE(epochs[0].v[4].has_value());
  EXPECT_DOUBLE_EQ(*epochs[1].v[0], 1.5);  // not val_loss, though it comes first
  EXPECT_DOUBLE_EQ(*epochs[1].v[1], 0.45);  // newer Keras' spelling, not val_accuracy
  EXPECT_DOUBLE_EQ(*epochs[1].v[3], 0.5);
  EXPECT_DOUBLE_EQ(*epochs[1].v[4], 1e-4);
}

TEST(JobMetrics, KerasLinesAJobForgedAreSkipped) {
  const std::string out =
      "loss: 5.0 before any epoch\n"
      "Epoch 12345678901/2\n"  // too many digits to be an epoch
      "- loss: 4.0\n"
      "Epoch x/2\n"
      "- loss: 3.0\n"
      "Epoch 3/9\n"
      "- loss: nan - acc: inf - val_acc: 0.7\n";
  const auto epochs = parse_keras(out);
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_EQ(epochs[0].epoch, 3);
  EXPECT_FALSE(epochs[0].v[0].has_value());
  EXPECT_FALSE(epochs[0].v[1].has_value());
  EXPECT_DOUBLE_EQ(*epochs[0].v[3], 0.7);
}

TEST(JobMetrics, MetricsJsonKeepsNumbersAndRefusesOtherShapes) {
  const auto rows =
      parse_metrics_json(R"({"epochs": [{"epoch": 1, "loss": 2.0, "val_acc": "0.9"}, {"epoch": "2"}, {"epoch": 3, "acc": 0.5}]})");
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_DOUBLE_EQ(*(*rows)[0].v[0], 2.0);
  EXPECT_FALSE((*rows)[0].v[3].has_value());  // a string is not a number
  EXPECT_EQ((*rows)[1].epoch, 3);
  EXPECT_FALSE(parse_metrics_json(R"({"epochs": {}})").has_value());
  EXPECT_FALSE(parse_metrics_json("[1,2]").has_value());
  EXPECT_FALSE(parse_metrics_json(R"({"epochs": )" + std::string(64, '[')).has_value());
}

TEST(JobMetrics, DownsampleKeepsTheFirstAndTheLast) {
  std::vector<int> rows;
  for (int i = 0; i < 1000; ++i) rows.push_back(i);
  const auto out = downsample(rows, 5);
  EXPECT_EQ(out, (std::vector<int>{0, 249, 499, 749, 999}));
  EXPECT_EQ(downsample(rows, 1000), rows);
  EXPECT_EQ(downsample(rows, 1), std::vector<int>{0});
}

TEST(JobMetrics, EpochJsonLeavesRateAndTimeOutOfCurves) {
  Epoch e;
  e.epoch = 4;
  e.v[0] = 1.0;
  e.v[5] = 30.0;
  const Json curve = epoch_json(e, false);
  EXPECT_EQ(curve["epoch"], 4);
  EXPECT_EQ(curve["loss"], 1.0);
  EXPECT_TRUE(curve["acc"].is_null());
  EXPECT_FALSE(curve.contains("seconds"));
  EXPECT_EQ(epoch_json(e, true)["seconds"], 30.0);
}

}  // namespace
}  // namespace batchai::serve
