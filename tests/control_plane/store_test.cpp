// Store: the read-only open that a full disk falls back to (Store::open_read_only).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "store/store.hpp"

namespace batchai::control_plane {
namespace {

namespace fs = std::filesystem;

class StoreReadOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    // A folder name with every character an SQLite URI treats specially.
    dir_ = fs::temp_directory_path() / ("batchai-store-" + std::to_string(::getpid())) / "home ?#%&=";
    fs::create_directories(dir_);
    db_ = dir_ / "state.db";
    auto store = Store::open(db_);
    store->write([&] { store->exec("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES ('kept')"); });
  }  // the last connection closes: the WAL is checkpointed into the file and removed
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  fs::path dir_;
  fs::path db_;
};

TEST_F(StoreReadOnly, ReadsWhatIsStoredAndCreatesNothing) {
  ASSERT_FALSE(fs::exists(db_.string() + "-wal"));
  auto store = Store::open_read_only(db_);
  const std::string text = store->read([&] {
    auto st = store->prepare("SELECT text FROM notes");
    return st.step() ? st.text(0) : std::string();
  });
  EXPECT_EQ(text, "kept");
  EXPECT_FALSE(fs::exists(db_.string() + "-wal"));
  EXPECT_FALSE(fs::exists(db_.string() + "-shm"));
}

TEST_F(StoreReadOnly, EveryWriteSaysTheDiskIsFull) {
  auto store = Store::open_read_only(db_);
  try {
    store->write([&] { store->exec("INSERT INTO notes VALUES ('lost')"); });
    FAIL() << "a write went through";
  } catch (const StateDiskFull& e) {
    EXPECT_NE(std::string(e.what()).find("the disk is full"), std::string::npos) << e.what();
  }
  auto again = Store::open(db_);
  auto st = again->prepare("SELECT count(*) FROM notes");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.integer(0), 1);
}

TEST_F(StoreReadOnly, AFileOfAnOlderSchemaIsNotOpened) {
  auto migrations = control_plane_migrations();
  migrations.push_back({migrations.back().version + 1, "CREATE TABLE later(x)"});
  EXPECT_THROW(Store::open_read_only(db_, migrations), StateDiskFull);
}

}  // namespace
}  // namespace batchai::control_plane
