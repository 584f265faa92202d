// Store: the read-only open that a full disk falls back to (Store::open_read_only).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "store/store.hpp"
#include "support/temp_dir.hpp"

namespace batchai::control_plane {
namespace {

namespace fs = std::filesystem;

class StoreReadOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    // A folder name with every character an SQLite URI treats specially.
    fs::create_directories(dir_);
    db_ = dir_ / "state.db";
    auto store = Store::open(db_);
    store->write([&] { store->exec("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES ('kept')"); });
  }  // the last connection closes: the WAL is checkpointed into the file and removed

  test::TempDir tmp_{"batchai-store"};
  fs::path dir_ = tmp_ / "home ?#%&=";
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
