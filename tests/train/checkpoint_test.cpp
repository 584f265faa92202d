// Checkpoints: exact round trip, atomic replacement, and torn / corrupt files rejected with a
// message that says what to do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "batchai/common/errors.hpp"
#include "io/checkpoint.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train {
namespace {
namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ckpt_.epoch = 3;
    ckpt_.global_step = 4689;
    ckpt_.seed = 0xfeedfacecafebeefULL;
    ckpt_.rng_state = "12345 67890 state words";
    ckpt_.params.resize(1000);
    ckpt_.optimizer_state.resize(1000);
    for (std::size_t i = 0; i < 1000; ++i) {
      ckpt_.params[i] = 0.001f * static_cast<float>(i) - 0.3f;
      ckpt_.optimizer_state[i] = 1e-6f * static_cast<float>(i * i);
    }
    ckpt_.extra = {{"model", "cifar10_cnn"}, {"ranks", "2"}};
    path_ = (dir_ / "checkpoints" / "last.ckpt").string();
  }

  void expect_rejected(const std::string& why) {
    try {
      load_checkpoint(path_);
      FAIL() << "expected a torn-file error (" << why << ")";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("torn or corrupt"), std::string::npos) << e.what();
    }
  }

  test::TempDir tmp_{"batchai-ckpt-test"};
  fs::path dir_ = tmp_.path();
  std::string path_;
  Checkpoint ckpt_;
};

TEST_F(CheckpointTest, RoundTripsEveryField) {
  save_checkpoint(path_, ckpt_);
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
  const Checkpoint back = load_checkpoint(path_);
  EXPECT_EQ(back.epoch, 3);
  EXPECT_EQ(back.global_step, 4689);
  EXPECT_EQ(back.seed, 0xfeedfacecafebeefULL);
  EXPECT_EQ(back.rng_state, ckpt_.rng_state);
  EXPECT_EQ(back.params, ckpt_.params);
  EXPECT_EQ(back.optimizer_state, ckpt_.optimizer_state);
  EXPECT_EQ(back.extra, ckpt_.extra);
}

TEST_F(CheckpointTest, SavingAgainReplacesTheFile) {
  save_checkpoint(path_, ckpt_);
  ckpt_.epoch = 4;
  ckpt_.params.resize(10);
  save_checkpoint(path_, ckpt_);
  const Checkpoint back = load_checkpoint(path_);
  EXPECT_EQ(back.epoch, 4);
  EXPECT_EQ(back.params.size(), 10u);
}

TEST_F(CheckpointTest, EmptyVectorsAreFine) {
  Checkpoint empty;
  save_checkpoint(path_, empty);
  const Checkpoint back = load_checkpoint(path_);
  EXPECT_TRUE(back.params.empty());
  EXPECT_TRUE(back.optimizer_state.empty());
}

TEST_F(CheckpointTest, TruncatedFileIsRejected) {
  save_checkpoint(path_, ckpt_);
  fs::resize_file(path_, fs::file_size(path_) / 2);
  expect_rejected("truncated");
  fs::resize_file(path_, 5);
  expect_rejected("tiny");
}

TEST_F(CheckpointTest, FlippedByteIsRejected) {
  save_checkpoint(path_, ckpt_);
  {
    std::fstream f(path_, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path_) / 2));
    f.put('\x7f');
  }
  expect_rejected("bit flip");
}

TEST_F(CheckpointTest, OtherFilesAndMissingFiles) {
  EXPECT_THROW(load_checkpoint(path_), NotFound);
  fs::create_directories(fs::path(path_).parent_path());
  std::ofstream(path_) << "this is not a checkpoint at all, but long enough to have a digest";
  expect_rejected("foreign file");
}

}  // namespace
}  // namespace batchai::train
