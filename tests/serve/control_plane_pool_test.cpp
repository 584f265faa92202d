// ControlPlanePool on a full disk: a control plane whose store had to open read-only (no room for
// the WAL) is not kept for later requests, so writes work again once there is room.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "batchai/common/clock.hpp"
#include "control_plane_pool.hpp"
#include "support/temp_dir.hpp"

namespace batchai::serve {
namespace {

namespace fs = std::filesystem;

class PoolOnASmallDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::mount("tmpfs", small_.c_str(), "tmpfs", 0, "size=8m") != 0)
      GTEST_SKIP() << "cannot mount a small tmpfs here: " << std::strerror(errno);
    mounted_ = true;
    settings_.home = small_ / "home";
  }
  void TearDown() override {
    if (mounted_) ::umount2(small_.c_str(), MNT_DETACH);
  }
  // Writes zeros until the disk takes no more.
  void fill_disk() {
    std::ofstream out(small_ / "filler", std::ios::binary);
    const std::string block(1 << 16, '\0');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size())) && out.flush()) {
    }
  }
  control_plane::Services services() const { return {std::make_shared<SystemClock>(), nullptr}; }

  test::TempDir tmp_{"batchai-pool"};
  fs::path small_ = tmp_.path();
  bool mounted_ = false;
  control_plane::Settings settings_;
};

TEST_F(PoolOnASmallDisk, AReadOnlyControlPlaneIsNotKeptForTheNextRequest) {
  control_plane::ControlPlane::open(settings_, services()).reset();  // the store exists; no WAL left
  ASSERT_FALSE(fs::exists(settings_.home / "state.db-wal"));
  fill_disk();
  ControlPlanePool pool(settings_, services());
  {
    auto lease = pool.borrow();
    ASSERT_TRUE((*lease).state_read_only());
  }
  fs::remove(small_ / "filler");
  auto lease = pool.borrow();
  EXPECT_FALSE((*lease).state_read_only());
}

}  // namespace
}  // namespace batchai::serve
