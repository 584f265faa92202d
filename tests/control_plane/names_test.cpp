// Hostile names and locations in the control plane (issue 24 rows 7, 9, 12): locations must be
// Azure regions (ARM's matching, nothing stored otherwise); storage names must be UTF-8 within
// Azure's lengths; listings of names a job made that are not UTF-8 still make valid JSON.
#include <fstream>

#include "batchai/common/utf8.hpp"
#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;
namespace fs = std::filesystem;

// The service code of the InvalidArgument `fn` throws ("" when it throws none).
template <typename F>
std::string code_of(F&& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(is_valid_utf8(e.what()));
    EXPECT_EQ(std::string(e.what()).find_first_of("\n\t"), std::string::npos) << e.what();
    return e.code();
  }
  return "";
}

TEST_F(ControlPlaneTest, LocationsAreAzureRegionsMatchedAsArmDoes) {
  EXPECT_EQ(code_of([&] { cp_->groups().create("forged", "east\nus\tforged", std::nullopt); }),
            "LocationNotAvailableForResourceGroup");
  EXPECT_EQ(code_of([&] { cp_->groups().create("forged", "mars", std::nullopt); }), "LocationNotAvailableForResourceGroup");
  EXPECT_EQ(code_of([&] { cp_->groups().create("forged", "east\xffus", std::nullopt); }),
            "LocationNotAvailableForResourceGroup");
  EXPECT_EQ(code_of([&] { cp_->groups().create("forged", "", std::nullopt); }), "LocationRequired");
  EXPECT_FALSE(cp_->groups().exists("forged"));
  EXPECT_EQ(cp_->groups().list(), Json::array());
  // Case and spaces do not matter; the stored form has neither.
  EXPECT_EQ(cp_->groups().create("rg", "East US 2", std::nullopt)["location"], "eastus2");
  EXPECT_EQ(cp_->groups().create("rg2", "WESTEUROPE", std::nullopt)["location"], "westeurope");
  EXPECT_EQ(code_of([&] { cp_->workspaces().create("rg", "ws", std::string("west\nus")); }),
            "LocationNotAvailableForResourceType");
  EXPECT_THROW(cp_->workspaces().show({"rg", "ws"}), NotFound);
  EXPECT_EQ(cp_->workspaces().create("rg", "ws", std::string("North Europe"))["location"], "northeurope");
  EXPECT_EQ(cp_->workspaces().create("rg", "ws2", std::nullopt)["location"], "eastus2");  // the group's
  EXPECT_EQ(code_of([&] { cp_->storage_accounts().create("rg", "acct1", std::string("eastus\t"), "", ""); }),
            "LocationNotAvailableForResourceType");
  EXPECT_THROW(cp_->storage_accounts().show(std::nullopt, "acct1"), NotFound);
  EXPECT_EQ(cp_->storage_accounts().create("rg", "acct1", std::string("west us 3"), "", "")["location"], "westus3");
}

class StorageNamesTest : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    cp_->groups().create("rg", "eastus", std::nullopt);
    cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
    auth_ = {"acct", std::nullopt};
    cp_->storage().share_create(auth_, "logs");
    cp_->storage().container_create(auth_, "models");
  }
  StorageAuth auth_;
};

TEST_F(StorageNamesTest, NamesThatAreNotUtf8AreRefused) {
  for (const std::string& name :
       {std::string("bad\xff"), std::string("x\xc0\xaf"), std::string("s\xed\xa0\x80"), std::string("nul\0x", 5)}) {
    EXPECT_EQ(code_of([&] { cp_->storage().blob_put(auth_, "models", name, "x"); }), "InvalidResourceName");
    EXPECT_EQ(code_of([&] { cp_->storage().file_create(auth_, "logs", name, 1); }), "InvalidResourceName");
    EXPECT_EQ(code_of([&] { cp_->storage().directory_create(auth_, "logs", name); }), "InvalidResourceName");
  }
  EXPECT_TRUE(fs::is_empty(cp_->storage().share_root("acct", "logs")));
  EXPECT_TRUE(fs::is_empty(cp_->storage().container_root("acct", "models")));
}

TEST_F(StorageNamesTest, LengthsAreAzuresLimits) {
  EXPECT_EQ(code_of([&] { cp_->storage().blob_put(auth_, "models", std::string(300, 'b'), "x"); }), "OutOfRangeInput");
  EXPECT_EQ(code_of([&] { cp_->storage().file_create(auth_, "logs", std::string(256, 'f'), 1); }), "OutOfRangeInput");
  EXPECT_EQ(code_of([&] { cp_->storage().directory_create(auth_, "logs", std::string(300, 'd')); }), "OutOfRangeInput");
  // 255 characters a segment fit. A segment also holds at most 255 bytes here (a folder name's
  // limit): 200 two-byte characters are refused the same way rather than failing on disk.
  EXPECT_NO_THROW(cp_->storage().file_create(auth_, "logs", std::string(255, 'f'), 1));
  std::string wide;
  for (int i = 0; i < 200; ++i) wide += "\xC3\xA9";
  EXPECT_EQ(code_of([&] { cp_->storage().blob_put(auth_, "models", wide, "x"); }), "OutOfRangeInput");
  // A blob of 1,024 characters over five segments is stored; 1,025 is refused.
  std::string name = std::string(255, 'a') + "/" + std::string(255, 'b') + "/" + std::string(255, 'c') + "/" +
                     std::string(254, 'd') + "/z";
  ASSERT_EQ(name.size(), 1024u);
  EXPECT_NO_THROW(cp_->storage().blob_put(auth_, "models", name, "x"));
  EXPECT_EQ(code_of([&] { cp_->storage().blob_put(auth_, "models", name + "z", "x"); }), "OutOfRangeInput");
  // An upload into a directory: the local file's own name joins the path and is checked with it.
  const fs::path local = root_ / (std::string(200, 'l') + ".txt");
  std::ofstream(local) << "x";
  std::string dirs;  // 1,928 characters: within the limit until the 204-character name joins it
  for (int i = 0; i < 8; ++i) dirs += std::string(240, 'p') + "/";
  EXPECT_EQ(code_of([&] { cp_->storage().file_upload(auth_, "logs", local, dirs); }), "OutOfRangeInput");
}

TEST_F(StorageNamesTest, ListingsOfNamesJobsMadeAreValidJson) {
  const fs::path share = cp_->storage().share_root("acct", "logs");
  const fs::path container = cp_->storage().container_root("acct", "models");
  std::ofstream(share / "bad\xff") << "1";
  fs::create_directories(share / "dir\xfe");
  std::ofstream(container / "blob\xc0\xaf") << "2";
  const Json files = cp_->storage().file_list(auth_, "logs", std::nullopt);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["name"], "bad\xEF\xBF\xBD");
  EXPECT_EQ(files[1]["name"], "dir\xEF\xBF\xBD");
  EXPECT_NO_THROW((void)files.dump());
  EXPECT_EQ(cp_->storage().directory_list(auth_, "logs", "")[0]["name"], "dir\xEF\xBF\xBD");
  const Json blobs = cp_->storage().blob_list(auth_, "models", std::nullopt);
  ASSERT_EQ(blobs.size(), 1u);
  EXPECT_EQ(blobs[0]["name"], "blob\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_NO_THROW((void)blobs.dump());
}

}  // namespace
}  // namespace batchai::control_plane
