// MetricsLog writes CSV, JSON and an SVG after each epoch; resume reads the JSON back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/metrics_log.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train {
namespace {
namespace fs = std::filesystem;

using test::read_file;

class MetricsLogTest : public ::testing::Test {
 protected:
  static EpochMetrics row(int epoch) {
    EpochMetrics m;
    m.epoch = epoch;
    m.loss = 2.0 / epoch;
    m.acc = 0.1 * epoch;
    m.val_loss = epoch == 2 ? EpochMetrics::kNone : 2.2 / epoch;
    m.val_acc = epoch == 2 ? EpochMetrics::kNone : 0.09 * epoch;
    m.lr = 1e-4;
    m.seconds = 10.5;
    m.images_per_sec = 4761.9;
    return m;
  }
  test::TempDir tmp_{"batchai-metrics-test"};
  fs::path dir_ = tmp_.path();
};

TEST_F(MetricsLogTest, WritesCsvJsonAndSvgAfterEachEpoch) {
  MetricsLog log(dir_.string());
  log.append(row(1));
  log.append(row(2));
  log.append(row(3));
  const std::string csv = read_file(log.csv_path());
  std::istringstream lines(csv);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header, "epoch,loss,acc,val_loss,val_acc,lr,seconds,images_per_sec");
  EXPECT_EQ(first, "1,2,0.1,2.2,0.09,0.0001,10.5,4761.9");
  EXPECT_EQ(second.substr(0, 14), "2,1,0.2,,,0.00");  // no validation in epoch 2

  const auto json = nlohmann::json::parse(read_file(log.json_path()));
  ASSERT_EQ(json["epochs"].size(), 3u);
  EXPECT_EQ(json["epochs"][0]["epoch"], 1);
  EXPECT_DOUBLE_EQ(json["epochs"][2]["acc"].get<double>(), 0.1 * 3);
  EXPECT_TRUE(json["epochs"][1]["val_loss"].is_null());

  const std::string svg = read_file(log.svg_path());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find(">loss</text>"), std::string::npos);
  EXPECT_NE(svg.find(">accuracy</text>"), std::string::npos);
  // Four curves: loss, val_loss, acc, val_acc.
  std::size_t polylines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 4u);
  EXPECT_NE(svg.rfind("</svg>"), std::string::npos);
}

TEST_F(MetricsLogTest, ResumeContinuesTheLog) {
  {
    MetricsLog log(dir_.string());
    log.append(row(1));
    log.append(row(2));
  }
  MetricsLog resumed(dir_.string(), "metrics", true);
  ASSERT_EQ(resumed.rows().size(), 2u);
  EXPECT_TRUE(std::isnan(resumed.rows()[1].val_acc));
  resumed.append(row(3));
  EXPECT_EQ(MetricsLog::from_json(read_file(resumed.json_path())).size(), 3u);
}

TEST_F(MetricsLogTest, EmptyAndSingleEpochPlotsAreValid) {
  EXPECT_NE(MetricsLog::to_svg({}).find("</svg>"), std::string::npos);
  const std::string one = MetricsLog::to_svg({row(1)});
  EXPECT_EQ(one.find("nan"), std::string::npos);
  EXPECT_EQ(one.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace batchai::train
