// File shares and blob containers: real folders, key checks, and paths that try to escape.
#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;
using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

class StorageTest : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    cp_->groups().create("rg", "eastus", std::nullopt);
    cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
    key_ = cp_->storage_accounts().keys(std::nullopt, "acct")[0]["value"];
    auth_ = {"acct", key_};
    write_file(root_ / "src" / "train.py", "print('hi')\n");
  }
  std::string key_;
  StorageAuth auth_;
};

TEST_F(StorageTest, ShareLifecycleWithTutorialPaths) {
  EXPECT_EQ(cp_->storage().share_create(auth_, "batchaisample"), (Json{{"created", true}}));
  EXPECT_EQ(cp_->storage().share_create(auth_, "batchaisample"), (Json{{"created", false}}));
  EXPECT_EQ(cp_->storage().share_exists(auth_, "batchaisample"), (Json{{"exists", true}}));
  EXPECT_EQ(cp_->storage().share_exists(auth_, "other"), (Json{{"exists", false}}));
  EXPECT_EQ(cp_->storage().directory_create(auth_, "batchaisample", "horovod"), (Json{{"created", true}}));
  // `--path horovod` names the directory (no '.' in the last component), like az.
  cp_->storage().file_upload(auth_, "batchaisample", root_ / "src" / "train.py", std::string("horovod"));
  fs::path stored = cp_->storage().share_root("acct", "batchaisample") / "horovod" / "train.py";
  EXPECT_EQ(read_file(stored), "print('hi')\n");
  cp_->storage().file_upload(auth_, "batchaisample", root_ / "src" / "train.py", std::string("horovod/renamed.py"));
  Json files = cp_->storage().file_list(auth_, "batchaisample", std::string("horovod"));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["name"], "renamed.py");
  EXPECT_EQ(files[0]["type"], "file");
  EXPECT_EQ(files[0]["properties"]["contentLength"], 12);
  EXPECT_EQ(cp_->storage().file_list(auth_, "batchaisample", std::nullopt)[0]["type"], "dir");
  EXPECT_EQ(cp_->storage().directory_list(auth_, "batchaisample", "")[0]["name"], "horovod");
  cp_->storage().file_download(auth_, "batchaisample", "horovod/train.py", root_ / "out.py");
  EXPECT_EQ(read_file(root_ / "out.py"), "print('hi')\n");
  EXPECT_THROW(cp_->storage().directory_delete(auth_, "batchaisample", "horovod"), Conflict);
  cp_->storage().file_delete(auth_, "batchaisample", "horovod/train.py");
  cp_->storage().file_delete(auth_, "batchaisample", "horovod/renamed.py");
  EXPECT_EQ(cp_->storage().directory_delete(auth_, "batchaisample", "horovod"), (Json{{"deleted", true}}));
  EXPECT_EQ(cp_->storage().share_list(auth_)[0]["name"], "batchaisample");
  EXPECT_EQ(cp_->storage().share_delete(auth_, "batchaisample"), (Json{{"deleted", true}}));
}

TEST_F(StorageTest, WrongKeyAndUnknownAccount) {
  try {
    cp_->storage().share_create({"acct", std::string("bm9wZQ==")}, "sh1");
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("is not valid"), std::string::npos);
  }
  EXPECT_THROW(cp_->storage().share_create({"ghost", std::nullopt}, "sh1"), NotFound);
  EXPECT_THROW(cp_->storage().share_create(auth_, "Bad_Name"), InvalidArgument);
}

TEST_F(StorageTest, MissingParentAndShare) {
  EXPECT_THROW(cp_->storage().file_upload(auth_, "nosuch", root_ / "src" / "train.py", std::nullopt), NotFound);
  cp_->storage().share_create(auth_, "sh1");
  EXPECT_THROW(cp_->storage().file_upload(auth_, "sh1", root_ / "src" / "train.py", std::string("a/b/c.py")), NotFound);
  EXPECT_THROW(cp_->storage().file_upload(auth_, "sh1", root_ / "src" / "missing.py", std::nullopt), InvalidArgument);
}

TEST_F(StorageTest, SharePathsCannotEscape) {
  cp_->storage().share_create(auth_, "sh1");
  write_file(root_ / "home" / "secret.txt", "x");
  EXPECT_THROW(cp_->storage().file_download(auth_, "sh1", "../../../secret.txt", root_ / "o"), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_download(auth_, "sh1", "/etc/passwd", root_ / "o"), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_upload(auth_, "sh1", root_ / "src" / "train.py", std::string("../x.py")), InvalidArgument);
  EXPECT_THROW(cp_->storage().directory_create(auth_, "sh1", "../evil"), InvalidArgument);
  fs::create_directory_symlink(root_ / "home", cp_->storage().share_root("acct", "sh1") / "link");
  EXPECT_THROW(cp_->storage().file_download(auth_, "sh1", "link/secret.txt", root_ / "o"), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_upload(auth_, "sh1", root_ / "src" / "train.py", std::string("link/x.py")), InvalidArgument);
  EXPECT_THROW(cp_->storage().file_list(auth_, "sh1", std::string("link")), InvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "home" / "x.py"));
}

TEST_F(StorageTest, BlobsAndBatchUpload) {
  EXPECT_EQ(cp_->storage().container_create(auth_, "data"), (Json{{"created", true}}));
  cp_->storage().blob_upload(auth_, "data", root_ / "src" / "train.py", "scripts/train.py");
  write_file(root_ / "batch" / "a.bin", "aa");
  write_file(root_ / "batch" / "sub" / "b.bin", "bbb");
  write_file(root_ / "batch" / "c.txt", "c");
  Json up = cp_->storage().blob_upload_batch(auth_, "data", root_ / "batch", std::string("*.bin"));
  ASSERT_EQ(up.size(), 2u);
  EXPECT_EQ(up[0]["Blob"], "https://acct.blob.core.windows.net/data/a.bin");
  Json list = cp_->storage().blob_list(auth_, "data", std::nullopt);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[2]["name"], "sub/b.bin");
  EXPECT_EQ(list[2]["properties"]["contentLength"], 3);
  EXPECT_EQ(cp_->storage().blob_list(auth_, "data", std::string("scripts/")).size(), 1u);
  cp_->storage().blob_download(auth_, "data", "sub/b.bin", root_ / "b.out");
  EXPECT_EQ(read_file(root_ / "b.out"), "bbb");
  cp_->storage().blob_delete(auth_, "data", "sub/b.bin");
  EXPECT_FALSE(fs::exists(cp_->storage().container_root("acct", "data") / "sub"));
  EXPECT_THROW(cp_->storage().blob_upload(auth_, "data", root_ / "src" / "train.py", "../../escape.py"), InvalidArgument);
  EXPECT_THROW(cp_->storage().blob_upload(auth_, "data", root_ / "src" / "train.py", "/abs.py"), InvalidArgument);
  EXPECT_EQ(cp_->storage().container_list(auth_)[0]["name"], "data");
  EXPECT_EQ(cp_->storage().container_delete(auth_, "data"), (Json{{"deleted", true}}));
}

}  // namespace
}  // namespace batchai::control_plane
