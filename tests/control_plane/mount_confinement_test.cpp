// Mounts and storage names stay inside $BATCHAI_HOME: NodeLayout refuses names that are paths,
// link_mount_volumes refuses escaping mount paths and never creates a missing share or container
// (the node turns unusable and says which), and `cluster file list` lists links as links.
#include <gmock/gmock.h>

#include "node_mounts.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "fixture.hpp"

namespace fs = std::filesystem;

namespace batchai::control_plane::testing {
namespace {

using ::testing::HasSubstr;

TEST(StorageNames, LayoutRefusesNamesThatArePaths) {
  NodeLayout layout("/h");
  EXPECT_EQ(layout.share("Acct1", "data"), fs::path("/h/storage/acct1/shares/data"));
  for (const std::string bad : {"../x", "..", "/etc", "a/b", "data/", "Data", "ab", ""}) {
    EXPECT_THROW(layout.share("acct1", bad), InvalidArgument) << bad;
    EXPECT_THROW(layout.container("acct1", bad), InvalidArgument) << bad;
  }
  for (const std::string& bad : std::vector<std::string>{"../../x", "a", "acct_1", "/abc", std::string(25, 'a')})
    EXPECT_THROW(layout.storage_account(bad), InvalidArgument) << bad;
  expect_error<InvalidArgument>([&] { layout.share("acct1", "../.."); },
                                "The share name '../..' is not valid: use 3-63 lower-case letters, digits and single "
                                "hyphens.");
}

TEST(StorageNames, MountVolumesAreCheckedFieldByField) {
  auto refused = [](const Json& mv, const std::string& part) {
    try {
      validate_mount_volumes(mv);
      ADD_FAILURE() << "accepted " << mv.dump();
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr(part)) << mv.dump();
    }
  };
  refused({{"azureFileShares", {{{"azureFileUrl", "https://acct.file.core.windows.net/../../x"}, {"relativeMountPath", "a"}}}}},
          "The share name '../../x' is not valid");
  refused({{"azureFileShares", {{{"accountName", "../x"}, {"azureFileUrl", "https://a.file.core.windows.net/share"},
                                 {"relativeMountPath", "a"}}}}},
          "The storage account name '../x' is not valid");
  refused({{"azureBlobFileSystems", {{{"accountName", "acct"}, {"containerName", "/etc"}, {"relativeMountPath", "b"}}}}},
          "The container name '/etc' is not valid");
  refused({{"azureBlobFileSystems", {{{"accountName", "acct"}, {"containerName", "cont"}, {"relativeMountPath", "/b"}}}}},
          "mountVolumes.azureBlobFileSystems[0].relativeMountPath '/b' must be relative");
  refused({{"fileServers", {{{"fileServer", {{"id", "/subscriptions/s/resourceGroups/../providers/Microsoft.BatchAI/"
                                                    "workspaces/ws/fileServers/nfs"}}},
                             {"relativeMountPath", "n"}}}}},
          "the resource group '..' is not a valid resource group name");
  EXPECT_NO_THROW(validate_mount_volumes(
      {{"azureFileShares", {{{"azureFileUrl", "https://acct.file.core.windows.net/share"}, {"relativeMountPath", "afs/x"}}}}}));
}

class MountLinks : public ControlPlaneTest {
 protected:
  fs::path mounts() const { return root_ / "node" / "mounts"; }
};

TEST_F(MountLinks, LinksExistingStorageRefusesEscapesAndNeverCreatesMissingStorage) {
  make_workspace();
  cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
  cp_->storage().container_create({"acct", std::nullopt}, "cont");
  const NodeLayout& layout = cp_->layout();
  Json good = {{"azureBlobFileSystems", {{{"accountName", "acct"}, {"containerName", "cont"}, {"relativeMountPath", "bfs"}}}}};
  link_mount_volumes(layout, good, mounts());
  link_mount_volumes(layout, good, mounts());  // idempotent
  EXPECT_EQ(fs::canonical(mounts() / "bfs"), fs::canonical(cp_->storage().container_root("acct", "cont")));
  Json escape = {{"azureBlobFileSystems", {{{"accountName", "acct"}, {"containerName", "cont"}, {"relativeMountPath", "../../up"}}}}};
  EXPECT_THROW(link_mount_volumes(layout, escape, mounts()), InvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "up"));
  fs::create_directory_symlink(root_, mounts() / "planted");  // a link out under the mount root
  Json through = {{"unmanagedFileSystems", {{{"mountCommand", "true"}, {"relativeMountPath", "planted/made"}}}}};
  EXPECT_THROW(link_mount_volumes(layout, through, mounts()), InvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "made"));
  Json missing = {{"azureFileShares", {{{"accountName", "acct"}, {"azureFileUrl", "https://acct.file.core.windows.net/ghost"},
                                        {"relativeMountPath", "afs"}}}}};
  try {
    link_mount_volumes(layout, missing, mounts());
    ADD_FAILURE() << "a missing share was mounted";
  } catch (const NotFound& e) {
    EXPECT_THAT(e.what(), HasSubstr("Cannot mount the Azure File share 'ghost' of storage account 'acct' at 'afs': it "
                                    "does not exist."));
  }
  EXPECT_FALSE(fs::exists(cp_->storage().share_root("acct", "ghost")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(mounts() / "afs")));
}

TEST_F(MountLinks, AMissingShareMakesTheClusterNodeUnusableAndSaysWhich) {
  auto ws = make_workspace();
  cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
  auto o = cluster_options("c", 1);
  o.mounts.storage_account_name = "acct";
  o.mounts.afs_name = "ghost";
  cp_->clusters().create(o);
  Json s = wait_cluster(ws, "c", [](const Json& d) { return d["nodeStateCounts"]["unusableNodeCount"] == 1; });
  ASSERT_EQ(s["nodeStateCounts"]["unusableNodeCount"], 1) << s.dump();
  ASSERT_TRUE(s["errors"].is_array()) << s.dump();
  EXPECT_EQ(s["errors"][0]["code"], "NodeSetupFailed");
  EXPECT_THAT(s["errors"][0]["message"].get<std::string>(),
              HasSubstr("Cannot mount the Azure File share 'ghost' of storage account 'acct'"));
  EXPECT_FALSE(fs::exists(cp_->storage().share_root("acct", "ghost")));
}

TEST_F(MountLinks, ClusterFileListShowsLinksAsLinksAndRefusesDotDot) {
  auto ws = make_workspace();
  cp_->storage_accounts().create("rg", "acct", std::nullopt, "Standard_LRS", "Storage");
  cp_->storage().share_create({"acct", std::nullopt}, "logs");
  write_file(root_ / "secret.txt", "SECRET");
  auto o = cluster_options("c", 1);
  o.mounts.storage_account_name = "acct";
  o.mounts.afs_name = "logs";
  o.setup_task = "ln -s " + (root_ / "secret.txt").string() + " $AZ_BATCHAI_STDOUTERR_DIR/leak.txt; "
                 "ln -s nowhere $AZ_BATCHAI_STDOUTERR_DIR/dangling; echo ok";
  o.setup_task_output = "$AZ_BATCHAI_MOUNT_ROOT/afs";
  cp_->clusters().create(o);
  Json s = wait_cluster(ws, "c", [](const Json& d) { return d["nodeStateCounts"]["idleNodeCount"] == 1; });
  ASSERT_EQ(s["nodeStateCounts"]["idleNodeCount"], 1) << s.dump();
  Json files = cp_->nodes().file_list(ws, "c", ".", 60);
  std::map<std::string, Json> by_name;
  for (const auto& f : files) by_name[f["name"]] = f;
  ASSERT_EQ(files.size(), 4u) << files.dump();
  EXPECT_TRUE(by_name["leak.txt"]["size"].is_null()) << files.dump();
  EXPECT_TRUE(by_name["leak.txt"]["download_url"].is_null());
  EXPECT_TRUE(by_name["dangling"]["size"].is_null());
  EXPECT_EQ(by_name.begin()->second["is_directory"], false);
  EXPECT_THROW(cp_->nodes().file_list(ws, "c", "../..", 60), InvalidArgument);
  EXPECT_THROW(cp_->nodes().file_list(ws, "c", "/etc", 60), InvalidArgument);
}

}  // namespace
}  // namespace batchai::control_plane::testing
