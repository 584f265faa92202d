// CIFAR-10 binary reader and synthetic writer: layout, sizes, clear errors, and that the
// synthetic classes are separable (a nearest-class-mean classifier beats chance by far).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "batchai/common/errors.hpp"
#include "data/cifar10.hpp"
#include "data/synthetic_cifar10.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train {
namespace {
namespace fs = std::filesystem;

class Cifar10Test : public ::testing::Test {
 protected:
  test::TempDir tmp_{"batchai-cifar-test"};
  fs::path dir_ = tmp_.path();
};

TEST_F(Cifar10Test, SyntheticFilesUseTheOfficialRecordLayout) {
  write_synthetic_cifar10(dir_.string(), 103, 17, 1);
  ASSERT_TRUE(has_cifar10(dir_.string()));
  std::uintmax_t total = 0;
  for (const auto& f : cifar10_train_files()) total += fs::file_size(dir_ / f);
  EXPECT_EQ(total, 103u * 3073u);
  EXPECT_EQ(fs::file_size(dir_ / "test_batch.bin"), 17u * 3073u);

  // Record 0 of data_batch_1: label byte then the CHW image, read back unchanged.
  std::ifstream in(dir_ / "data_batch_1.bin", std::ios::binary);
  std::array<char, 3073> rec{};
  in.read(rec.data(), rec.size());
  const Dataset train = load_cifar10_train(dir_.string());
  ASSERT_EQ(train.count, 103);
  ASSERT_EQ(train.images.size(), 103u * 3072u);
  EXPECT_EQ(train.labels[0], static_cast<std::uint8_t>(rec[0]));
  EXPECT_EQ(0, std::memcmp(train.image(0), rec.data() + 1, 3072));
  for (auto label : train.labels) EXPECT_LT(label, 10);
  EXPECT_EQ(load_cifar10_test(dir_.string()).count, 17);
}

TEST_F(Cifar10Test, SameSeedSameData) {
  write_synthetic_cifar10((dir_ / "a").string(), 20, 5, 42);
  write_synthetic_cifar10((dir_ / "b").string(), 20, 5, 42);
  const Dataset a = load_cifar10_train((dir_ / "a").string());
  const Dataset b = load_cifar10_train((dir_ / "b").string());
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
}

TEST_F(Cifar10Test, MissingFilesGiveDownloadInstructions) {
  fs::create_directories(dir_);
  try {
    load_cifar10_train(dir_.string());
    FAIL() << "expected NotFound";
  } catch (const NotFound& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("CIFAR-10 not found in"), std::string::npos) << msg;
    EXPECT_NE(msg.find("data_batch_1.bin"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cifar-10-binary.tar.gz"), std::string::npos) << msg;
    EXPECT_NE(msg.find("BATCHAI_CIFAR10_DIR"), std::string::npos) << msg;
  }
  EXPECT_THROW(load_cifar10_test(dir_.string()), NotFound);
  EXPECT_FALSE(has_cifar10(dir_.string()));
}

TEST_F(Cifar10Test, EmptyFilesAreRefusedNotTrainedOn) {
  // Six empty files: a training run would cut its batches from no images (a division by zero).
  fs::create_directories(dir_);
  for (const auto& f : cifar10_train_files()) std::ofstream(dir_ / f).flush();
  std::ofstream(dir_ / cifar10_test_file()).flush();
  ASSERT_TRUE(has_cifar10(dir_.string()));
  EXPECT_THROW(load_cifar10_train(dir_.string()), InvalidArgument);
  EXPECT_THROW(load_cifar10_test(dir_.string()), InvalidArgument);
}

TEST_F(Cifar10Test, TruncatedFileAndBadLabelAreRejected) {
  write_synthetic_cifar10(dir_.string(), 10, 4, 3);
  fs::resize_file(dir_ / "test_batch.bin", 3 * 3073 + 100);
  try {
    load_cifar10_test(dir_.string());
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of the 3073-byte record"), std::string::npos);
  }
  {
    std::fstream f(dir_ / "data_batch_1.bin", std::ios::binary | std::ios::in | std::ios::out);
    f.put(static_cast<char>(17));
  }
  EXPECT_THROW(load_cifar10_file((dir_ / "data_batch_1.bin").string()), InvalidArgument);
}

TEST_F(Cifar10Test, SyntheticClassesAreSeparable) {
  write_synthetic_cifar10(dir_.string(), 500, 200, 5);
  const Dataset train = load_cifar10_train(dir_.string());
  const Dataset test = load_cifar10_test(dir_.string());
  // Nearest class mean on raw pixels: far above 10% when classes carry real signal.
  std::vector<std::vector<double>> mean(10, std::vector<double>(3072, 0.0));
  std::vector<int> n(10, 0);
  for (int i = 0; i < train.count; ++i) {
    const int c = train.labels[static_cast<std::size_t>(i)];
    ++n[static_cast<std::size_t>(c)];
    for (int p = 0; p < 3072; ++p) mean[std::size_t(c)][std::size_t(p)] += train.image(i)[p];
  }
  for (int c = 0; c < 10; ++c) {
    ASSERT_GT(n[std::size_t(c)], 0) << "class " << c << " never generated";
    for (auto& v : mean[std::size_t(c)]) v /= n[std::size_t(c)];
  }
  int correct = 0;
  for (int i = 0; i < test.count; ++i) {
    int best = 0;
    double best_d = 1e300;
    for (int c = 0; c < 10; ++c) {
      double d = 0;
      for (int p = 0; p < 3072; ++p) {
        const double diff = test.image(i)[p] - mean[std::size_t(c)][std::size_t(p)];
        d += diff * diff;
      }
      if (d < best_d) {
        best_d = d;
        best = c;
      }
    }
    correct += best == test.labels[static_cast<std::size_t>(i)];
  }
  EXPECT_GT(correct, test.count / 2) << "accuracy " << correct << "/" << test.count;
}

}  // namespace
}  // namespace batchai::train
