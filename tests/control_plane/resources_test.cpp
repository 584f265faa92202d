// Groups, storage accounts, workspaces, experiments, file servers and usages: documents,
// case-insensitive lookups, not-found/exists messages and cascading deletes.
#include "batchai/common/ids.hpp"
#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::ControlPlaneTest;
using testing::expect_error;
using testing::kSshKey;
namespace fs = std::filesystem;

TEST_F(ControlPlaneTest, StoreIsWalWithSchemaVersion) {
  EXPECT_EQ(cp_->store().schema_version(), control_plane_migrations().back().version);
  auto st = cp_->store().prepare("PRAGMA journal_mode");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "wal");
  EXPECT_TRUE(fs::exists(root_ / "home" / "state.db"));
  EXPECT_EQ(fs::status(root_ / "home").permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST_F(ControlPlaneTest, GroupLifecycle) {
  Json g = cp_->groups().create("MyGroup", "East US", Json{{"a", "b"}});
  EXPECT_EQ(g["id"], "/subscriptions/" + subscription_id() + "/resourceGroups/MyGroup");
  EXPECT_EQ(g["location"], "eastus");
  EXPECT_EQ(g["properties"]["provisioningState"], "Succeeded");
  EXPECT_TRUE(g["managedBy"].is_null());
  EXPECT_EQ(g["tags"]["a"], "b");
  EXPECT_EQ(cp_->groups().show("mygroup"), g);
  EXPECT_TRUE(cp_->groups().exists("MYGROUP"));
  EXPECT_EQ(cp_->groups().list().size(), 1u);
  EXPECT_THROW(cp_->groups().create("mygroup", "westus", std::nullopt), InvalidArgument);
  cp_->groups().remove("MyGroup");
  EXPECT_FALSE(cp_->groups().exists("MyGroup"));
  EXPECT_THROW(cp_->groups().show("MyGroup"), NotFound);
  EXPECT_THROW(cp_->groups().remove("MyGroup"), NotFound);
}

// Tags keep ARM's rules wherever they are set; a refused update leaves the stored ones.
TEST_F(ControlPlaneTest, TagsAreCheckedAndReplacedWhole) {
  cp_->groups().create("rg", "eastus", std::nullopt);
  EXPECT_TRUE(cp_->workspaces().create("rg", "ws", std::nullopt)["tags"].is_null());
  EXPECT_EQ(cp_->workspaces().update_tags({"rg", "ws"}, {{"a", "1"}})["tags"], Json({{"a", "1"}}));
  EXPECT_EQ(cp_->workspaces().create("rg", "WS", std::nullopt, Json{{"b", "2"}})["tags"], Json({{"b", "2"}}));
  EXPECT_EQ(cp_->workspaces().show({"rg", "ws"})["tags"], Json({{"b", "2"}}));
  for (const Json& bad : {Json::array({"a"}), Json{{"a/b", "c"}}, Json{{"a", 1}}, Json{{"a", std::string(257, 'v')}}}) {
    EXPECT_THROW(cp_->workspaces().update_tags({"rg", "ws"}, bad), InvalidArgument) << bad.dump().substr(0, 40);
    EXPECT_THROW(cp_->groups().update_tags("rg", bad), InvalidArgument) << bad.dump().substr(0, 40);
  }
  EXPECT_THROW(cp_->groups().create("rg2", "eastus", Json{{"a%", "b"}}), InvalidArgument);
  EXPECT_FALSE(cp_->groups().exists("rg2"));
  EXPECT_EQ(cp_->workspaces().show({"rg", "ws"})["tags"], Json({{"b", "2"}}));
  EXPECT_EQ(cp_->groups().update_tags("RG", Json::object())["tags"], Json::object());
  EXPECT_THROW(cp_->workspaces().update_tags({"rg", "none"}, Json::object()), NotFound);
  EXPECT_THROW(cp_->groups().update_tags("none", Json::object()), NotFound);
}

TEST_F(ControlPlaneTest, StorageAccounts) {
  cp_->groups().create("rg", "eastus", std::nullopt);
  cp_->groups().create("rg2", "eastus", std::nullopt);
  Json a = cp_->storage_accounts().create("rg", "mystore1", std::nullopt, "Standard_LRS", "Storage");
  EXPECT_EQ(a["primaryEndpoints"]["file"], "https://mystore1.file.core.windows.net/");
  EXPECT_EQ(a["sku"]["name"], "Standard_LRS");
  EXPECT_EQ(a["sku"]["tier"], "Standard");
  EXPECT_EQ(a["resourceGroup"], "rg");
  EXPECT_EQ(a["location"], "eastus");
  EXPECT_EQ(cp_->storage_accounts().show(std::nullopt, "mystore1"), a);
  EXPECT_THROW(cp_->storage_accounts().show(std::string("rg2"), "mystore1"), NotFound);
  EXPECT_THROW(cp_->storage_accounts().create("rg2", "mystore1", std::nullopt, "Standard_LRS", "Storage"), AlreadyExists);
  EXPECT_THROW(cp_->storage_accounts().create("rg", "My_Store", std::nullopt, "Standard_LRS", "Storage"), InvalidArgument);
  EXPECT_THROW(cp_->storage_accounts().create("rg", "ab", std::nullopt, "Standard_LRS", "Storage"), InvalidArgument);
  Json keys = cp_->storage_accounts().keys(std::nullopt, "mystore1");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0]["keyName"], "key1");
  EXPECT_EQ(keys[0]["permissions"], "Full");
  EXPECT_EQ(keys[0]["value"].get<std::string>().size(), 88u);  // base64 of 64 bytes
  EXPECT_NE(keys[0]["value"], keys[1]["value"]);
  EXPECT_EQ(cp_->storage_accounts().list(std::string("rg2")).size(), 0u);
  EXPECT_EQ(cp_->storage_accounts().list(std::nullopt).size(), 1u);
  cp_->storage_accounts().remove(std::nullopt, "mystore1");
  EXPECT_THROW(cp_->storage_accounts().keys(std::nullopt, "mystore1"), NotFound);
}

TEST_F(ControlPlaneTest, WorkspaceDocumentAndNotFound) {
  cp_->groups().create("rg", "eastus", std::nullopt);
  Json ws = cp_->workspaces().create("rg", "MyWs", std::nullopt);
  EXPECT_EQ(ws["id"], "/subscriptions/" + subscription_id() + "/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/MyWs");
  EXPECT_EQ(ws["location"], "eastus");
  EXPECT_EQ(ws["provisioningState"], "succeeded");
  EXPECT_EQ(ws["creationTime"], "2018-06-14T18:13:20+00:00");
  EXPECT_TRUE(ws["tags"].is_null());
  EXPECT_EQ(ws["type"], "Microsoft.BatchAI/workspaces");
  EXPECT_EQ(ws["resourceGroup"], "rg");
  EXPECT_EQ(ws.size(), 9u);
  EXPECT_EQ(cp_->workspaces().show({"RG", "myws"}), ws);
  EXPECT_EQ(cp_->workspaces().create("rg", "myws", std::nullopt), ws);  // create-or-update
  expect_error<NotFound>([&] { cp_->workspaces().show({"rg", "nope"}); }, "The specified workspace nope is not found");
  EXPECT_THROW(cp_->workspaces().create("nogroup", "w", std::nullopt), NotFound);
  expect_error<InvalidArgument>([&] { cp_->workspaces().create("rg", "bad name", std::nullopt); },
                                "validation error: Parameter 'workspace_name' must conform to the following pattern: "
                                "'^[-\\\\w_]+$'.");
  EXPECT_EQ(cp_->workspaces().list(std::nullopt).size(), 1u);
  cp_->workspaces().remove({"rg", "MYWS"});
  EXPECT_EQ(cp_->workspaces().list(std::string("rg")).size(), 0u);
}

TEST_F(ControlPlaneTest, Experiments) {
  auto ws = make_workspace();
  Json e = cp_->experiments().create(ws, "Exp1");
  EXPECT_EQ(e["type"], "Microsoft.BatchAI/workspaces/experiments");
  EXPECT_EQ(e["name"], "Exp1");
  EXPECT_EQ(e.size(), 7u);
  EXPECT_EQ(cp_->experiments().show(ws, "exp1"), e);
  cp_->experiments().create(ws, "exp0");
  Json list = cp_->experiments().list(ws);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["name"], "exp0");
  EXPECT_EQ(list[1], e);  // the list rebuilds exactly the stored document
  cp_->experiments().remove(ws, "EXP1");
  expect_error<NotFound>([&] { cp_->experiments().show(ws, "exp1"); }, "The specified experiment exp1 is not found");
}

TEST_F(ControlPlaneTest, GroupDeleteCascades) {
  auto ws = make_workspace();
  cp_->experiments().create(ws, "e");
  cp_->clusters().create(cluster_options("c", 1));
  cp_->storage_accounts().create("rg", "acct123", std::nullopt, "Standard_LRS", "Storage");
  cp_->storage().share_create({"acct123", std::nullopt}, "share");
  cp_->clusters().show(ws, "c");
  EXPECT_TRUE(fs::exists(root_ / "home" / "clusters" / "rg" / "ws" / "c"));
  cp_->groups().remove("rg");
  EXPECT_FALSE(fs::exists(root_ / "home" / "clusters" / "rg"));
  EXPECT_FALSE(fs::exists(root_ / "home" / "storage" / "acct123"));
  EXPECT_THROW(cp_->storage_accounts().show(std::nullopt, "acct123"), NotFound);
  for (const char* table : {"workspaces", "experiments", "clusters", "nodes", "storage_accounts"}) {
    auto st = cp_->store().prepare(std::string("SELECT count(*) FROM ") + table);
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.integer(0), 0) << table;
  }
}

TEST_F(ControlPlaneTest, FileServerMessagesInOrder) {
  auto ws = make_workspace();
  FileServerCreateOptions o;
  o.where = ws;
  o.name = "nfs";
  o.admin.user_name = "u";
  o.admin.ssh_key = kSshKey;
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "Please provide disk size in Gb.");
  o.disk_size = 10;
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); },
                                "Please provide number of data disks (at least one disk is required).");
  o.disk_count = 2;
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "Please provide storage account type (storage sku).");
  o.storage_sku = "Premium_LRS";
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "Please provide VM size.");
  o.vm_size = "Standard_D14_v2";
  o.subnet = "bad";
  expect_error<InvalidArgument>([&] { cp_->file_servers().create(o); }, "Ill-formed subnet resource id");
  o.subnet.reset();
  Json fs_doc = *cp_->file_servers().create(o);
  EXPECT_EQ(fs_doc["provisioningState"], "succeeded");
  EXPECT_EQ(fs_doc["vmSize"], "STANDARD_D14_V2");
  EXPECT_EQ(fs_doc["mountSettings"]["mountPoint"], "/mnt/data");
  EXPECT_EQ(fs_doc["mountSettings"]["fileServerInternalIp"], "10.0.0.4");
  EXPECT_EQ(fs_doc["dataDisks"]["diskSizeInGb"], 10);
  EXPECT_EQ(fs_doc["dataDisks"]["cachingType"], "none");
  EXPECT_TRUE(fs_doc["sshConfiguration"]["userAccountSettings"]["adminUserPassword"].is_null());
  EXPECT_EQ(fs_doc["subnet"]["resourceGroup"], "rg");
  EXPECT_EQ(cp_->file_servers().show(ws, "NFS"), fs_doc);
  expect_error<AlreadyExists>([&] { cp_->file_servers().create(o); },
                              "\"nfs\" already exists in \"rg\" resource group under ws resource group.");
  cp_->file_servers().remove(ws, "nfs");
  expect_error<NotFound>([&] { cp_->file_servers().show(ws, "nfs"); }, "The specified file server nfs is not found");
}

TEST_F(ControlPlaneTest, FileServerNoWaitProvisionsOverSimulatedTime) {
  open(std::chrono::seconds(3));
  auto ws = make_workspace();
  FileServerCreateOptions o = file_server_options("nfs");
  o.no_wait = true;
  EXPECT_FALSE(cp_->file_servers().create(o).has_value());
  Json d = cp_->file_servers().show(ws, "nfs");
  EXPECT_EQ(d["provisioningState"], "creating");
  EXPECT_TRUE(d["mountSettings"].is_null());
  clock_->advance(std::chrono::seconds(3));
  d = cp_->file_servers().show(ws, "nfs");
  EXPECT_EQ(d["provisioningState"], "succeeded");
  EXPECT_EQ(d["provisioningStateTransitionTime"], "2018-06-14T18:13:23+00:00");
  EXPECT_TRUE(d["mountSettings"].is_object());
}

TEST_F(ControlPlaneTest, UsagesCountAllocatedVcpus) {
  auto ws = make_workspace();
  cp_->clusters().create(cluster_options("c", 2));
  Json usages = cp_->clusters().list_usages("eastus");
  int nc = -1, total = -1;
  for (const auto& u : usages) {
    EXPECT_NE(u["name"]["value"].get<std::string>().find("Cluster"), std::string::npos);
    if (u["name"]["value"] == "Standard NC Family Cluster Dedicated vCPUs") nc = u["currentValue"];
    if (u["name"]["value"] == "Total Cluster Dedicated Regional vCPUs") total = u["currentValue"];
  }
  EXPECT_EQ(nc, 12);
  EXPECT_EQ(total, 12);
  EXPECT_EQ(cp_->clusters().list_usages("westus")[0]["currentValue"], 0);
}

}  // namespace
}  // namespace batchai::control_plane
