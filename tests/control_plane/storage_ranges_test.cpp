// The REST data plane's storage entry points (batchai serve): Create File of a declared length,
// Put Range at an offset inside it, reads through an opened descriptor, Put Blob from bytes; and
// their refusals (past the length, oversize ranges and lengths, links leading out, fifos, '..').
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;
using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

class StorageRangesTest : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    cp_->groups().create("rg", "eastus", std::nullopt);
    cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
    cp_->storage().share_create(auth_, "logs");
    cp_->storage().container_create(auth_, "models");
  }
  fs::path share() const { return cp_->storage().share_root("acct", "logs"); }
  StorageAuth auth_{"acct", std::nullopt};
};

std::string read_all(const StoredFile& f) {
  std::string out(f.size, '\0');
  EXPECT_EQ(::pread(f.fd.get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  return out;
}

TEST_F(StorageRangesTest, CreateThenWriteRangesInsideTheLength) {
  cp_->storage().directory_create(auth_, "logs", "dir");
  cp_->storage().file_create(auth_, "logs", "dir/a.bin", 10);
  EXPECT_EQ(fs::file_size(share() / "dir" / "a.bin"), 10u);
  cp_->storage().file_write_range(auth_, "logs", "dir/a.bin", 2, "abc");
  cp_->storage().file_write_range(auth_, "logs", "dir/a.bin", 7, "xyz");  // up to the last byte
  StoredFile f = cp_->storage().file_open(auth_, "logs", "dir/a.bin");
  EXPECT_EQ(read_all(f), std::string("\0\0abc\0\0xyz", 10));
  EXPECT_FALSE(f.etag.empty());
  // Create again replaces the content with zeros of the new length.
  cp_->storage().file_create(auth_, "logs", "dir/a.bin", 4);
  EXPECT_EQ(read_file(share() / "dir" / "a.bin"), std::string(4, '\0'));
}

TEST_F(StorageRangesTest, RefusesRangesPastTheLengthAndOversize) {
  cp_->storage().file_create(auth_, "logs", "a.bin", 10);
  try {
    cp_->storage().file_write_range(auth_, "logs", "a.bin", 8, "xyz");
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.code(), "InvalidRange");
  }
  EXPECT_THROW(cp_->storage().file_write_range(auth_, "logs", "a.bin", 11, ""), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_write_range(auth_, "logs", "a.bin", ~0ULL, "x"), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_write_range(auth_, "logs", "a.bin", 0, std::string(kMaxPutRangeBytes + 1, 'x')),
               InvalidArgument);
  EXPECT_THROW(cp_->storage().file_create(auth_, "logs", "b.bin", kMaxShareFileBytes + 1), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_write_range(auth_, "logs", "missing.bin", 0, "x"), NotFound);
  EXPECT_THROW(cp_->storage().file_create(auth_, "logs", "nodir/b.bin", 1), NotFound);
}

TEST_F(StorageRangesTest, RefusesEscapesLinksAndFifos) {
  EXPECT_THROW(cp_->storage().file_create(auth_, "logs", "../escape.bin", 1), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_create(auth_, "logs", "/etc/escape.bin", 1), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_create(auth_, "logs", "", 1), InvalidArgument);
  write_file(root_ / "outside.txt", "keep");
  fs::create_symlink(root_ / "outside.txt", share() / "link.txt");
  EXPECT_THROW(cp_->storage().file_create(auth_, "logs", "link.txt", 1), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_write_range(auth_, "logs", "link.txt", 0, "x"), InvalidArgument);
  EXPECT_EQ(read_file(root_ / "outside.txt"), "keep");
  ASSERT_EQ(::mkfifo((share() / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(cp_->storage().file_write_range(auth_, "logs", "fifo", 0, ""), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_open(auth_, "logs", "fifo"), NotFound);
  EXPECT_THROW(cp_->storage().blob_put(auth_, "models", "../x", "y"), InvalidArgument);
}

TEST_F(StorageRangesTest, BlobPutAndOpen) {
  cp_->storage().blob_put(auth_, "models", "a/b.h5", "weights");
  EXPECT_EQ(read_all(cp_->storage().blob_open(auth_, "models", "a/b.h5")), "weights");
  EXPECT_EQ(cp_->storage().blob_list(auth_, "models", std::nullopt)[0]["name"], "a/b.h5");
  EXPECT_EQ(cp_->storage().container_exists(auth_, "models"), (Json{{"exists", true}}));
  EXPECT_EQ(cp_->storage().container_exists(auth_, "other"), (Json{{"exists", false}}));
  try {
    cp_->storage().blob_open(auth_, "models", "nope");
    ADD_FAILURE();
  } catch (const NotFound& e) {
    EXPECT_EQ(e.code(), "BlobNotFound");
  }
}

}  // namespace
}  // namespace batchai::control_plane
