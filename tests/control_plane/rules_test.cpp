// Pure rules of docs/behaviour.md §4.3.1 (scale truth table), §4.3.2 (images), §4.3.3 (admin account),
// docs/behaviour.md §4.5.2 (mount patching truth table), path containment and the VM size table.
#include <unistd.h>

#include <map>

#include "node_mounts.hpp"
#include "cluster_rules.hpp"
#include "mount_rules.hpp"
#include "vm_sizes.hpp"
#include "local_files.hpp"
#include "fixture.hpp"

namespace batchai::control_plane {
namespace {

using testing::expect_error;
using testing::kSshKey;
namespace fs = std::filesystem;

Json manual(int n) { return {{"autoScale", nullptr}, {"manual", {{"nodeDeallocationOption", "requeue"}, {"targetNodeCount", n}}}}; }
Json autoscale(int min, int max, int initial) {
  return {{"autoScale", {{"initialNodeCount", initial}, {"maximumNodeCount", max}, {"minimumNodeCount", min}}},
          {"manual", nullptr}};
}

TEST(ScaleSettings, TruthTable) {
  EXPECT_EQ(scale_settings_from_options(2, std::nullopt, std::nullopt, nullptr), manual(2));
  EXPECT_EQ(scale_settings_from_options(0, std::nullopt, std::nullopt, nullptr), manual(0));
  EXPECT_EQ(scale_settings_from_options(std::nullopt, 2, 2, nullptr), manual(2));
  EXPECT_EQ(scale_settings_from_options(2, 2, 2, nullptr), manual(2));
  EXPECT_EQ(scale_settings_from_options(3, 2, 2, nullptr), autoscale(2, 2, 3));
  EXPECT_EQ(scale_settings_from_options(std::nullopt, 1, 3, nullptr), autoscale(1, 3, 0));
  EXPECT_EQ(scale_settings_from_options(1, 0, 2, nullptr), autoscale(0, 2, 1));
  expect_error<InvalidArgument>([] { scale_settings_from_options(2, 2, std::nullopt, nullptr); },
                                "You need to either provide both min and max node counts or not provide any of them");
  expect_error<InvalidArgument>([] { scale_settings_from_options(std::nullopt, 3, 1, nullptr); },
                                "Maximum nodes count must be greater or equal to minimum nodes count");
}

TEST(ScaleSettings, FallsBackToConfigOrFails) {
  EXPECT_EQ(scale_settings_from_options(std::nullopt, std::nullopt, std::nullopt, manual(4)), manual(4));
  EXPECT_EQ(scale_settings_from_options(std::nullopt, 0, 0, manual(4)), manual(4));
  expect_error<InvalidArgument>([] { scale_settings_from_options(std::nullopt, std::nullopt, std::nullopt, nullptr); },
                                "Please provide scale setting for the cluster via command line or configuration file");
}

TEST(Image, AliasesAndFullForm) {
  auto lts = parse_image("ubuntults", std::nullopt);
  EXPECT_EQ(lts["publisher"], "Canonical");
  EXPECT_EQ(lts["offer"], "UbuntuServer");
  EXPECT_EQ(lts["sku"], "16.04-LTS");
  EXPECT_TRUE(lts["version"].is_null());
  EXPECT_EQ(parse_image("UbuntuDSVM", std::nullopt)["offer"], "linux-data-science-vm-ubuntu");
  auto full = parse_image("pub:off:sku:1.0", std::nullopt);
  EXPECT_EQ(full["version"], "1.0");
  EXPECT_TRUE(parse_image("pub:off:sku:", std::nullopt)["version"].is_null());
  auto custom = parse_image("pub:off:sku:", std::string("/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/images/i"));
  EXPECT_EQ(custom["virtualMachineImageId"], "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/images/i");
}

TEST(Image, Errors) {
  expect_error<InvalidArgument>([] { parse_image("a:b:c", std::nullopt); },
                                R"(properties.virtualMachineConfiguration.imageReference must be given as "publisher:offer:sku:version" or "publisher:offer:sku:")");
  expect_error<InvalidArgument>([] { parse_image(":b:c:", std::nullopt); },
                                "properties.virtualMachineConfiguration.imageReference.publisher is required.");
  expect_error<InvalidArgument>([] { parse_image("a::c:", std::nullopt); }, "properties.virtualMachineConfiguration.imageReference.offer is required.");
  expect_error<InvalidArgument>([] { parse_image("a:b::", std::nullopt); }, "properties.virtualMachineConfiguration.imageReference.sku is required.");
  expect_error<InvalidArgument>([] { parse_image("Windows", std::nullopt); },
                                "Unsupported image alias \"Windows\", supported aliases are UbuntuLTS, UbuntuDSVM");
  expect_error<InvalidArgument>([] { parse_image("UbuntuLTS", std::string("not-an-id")); },
                                "Ill-formed custom image resource id");
}

class AdminTest : public ::testing::Test {
 protected:
  test::TempDir tmp_{"batchai-cp-test"};
  fs::path home_ = tmp_.path();
};

TEST_F(AdminTest, CommandLineOverridesConfigFieldByField) {
  AdminOptions o;
  o.password = "p";
  Json config = {{"adminUserName", "cfguser"}, {"adminUserSshPublicKey", kSshKey}};
  auto a = resolve_admin_account(o, config, home_, "osuser", true);
  EXPECT_EQ(a["adminUserName"], "cfguser");
  EXPECT_EQ(a["adminUserPassword"], "p");
  EXPECT_EQ(a["adminUserSshPublicKey"], kSshKey);
  o.user_name = "cli";
  EXPECT_EQ(resolve_admin_account(o, config, home_, "osuser", true)["adminUserName"], "cli");
}

TEST_F(AdminTest, DefaultsToOsUserAndDefaultKeyFile) {
  testing::write_file(home_ / ".ssh" / "id_rsa.pub", std::string(kSshKey) + "\n");
  auto a = resolve_admin_account({}, nullptr, home_, "osuser", true);
  EXPECT_EQ(a["adminUserName"], "osuser");
  EXPECT_EQ(a["adminUserSshPublicKey"], kSshKey);
}

TEST_F(AdminTest, ReadsKeyFileAndRejectsBadKeys) {
  testing::write_file(home_ / "k.pub", kSshKey);
  AdminOptions o;
  o.ssh_key = (home_ / "k.pub").string();
  EXPECT_EQ(resolve_admin_account(o, nullptr, home_, "u", true)["adminUserSshPublicKey"], kSshKey);
  o.ssh_key = "ssh-rsa bm90LWEta2V5";
  expect_error<InvalidArgument>([&] { resolve_admin_account(o, nullptr, home_, "u", true); }, "Incorrect ssh public key value.");
  o.ssh_key = "garbage";
  expect_error<InvalidArgument>([&] { resolve_admin_account(o, nullptr, home_, "u", true); }, "Incorrect ssh public key value.");
}

TEST_F(AdminTest, MissingUserOrCredentials) {
  expect_error<InvalidArgument>([&] { resolve_admin_account({}, nullptr, home_, "u", true); },
                                "Please provide admin user password or ssh key.");
  AdminOptions o;
  o.user_name = "";
  o.password = "p";
  expect_error<InvalidArgument>([&] { resolve_admin_account(o, nullptr, home_, "u", true); }, "Please provide admin user name.");
}

// Nodes batchai does not make (a Slurm partition's) carry no account: no credential is needed,
// the user name still defaults, and a key that is given is still checked.
TEST_F(AdminTest, NoCredentialNeededWhereNoAccountIsMade) {
  Json a = resolve_admin_account({}, nullptr, home_, "u", false);
  EXPECT_EQ(a["adminUserName"], "u");
  EXPECT_TRUE(a["adminUserPassword"].is_null());
  EXPECT_TRUE(a["adminUserSshPublicKey"].is_null());
  AdminOptions o;
  o.ssh_key = "garbage";
  expect_error<InvalidArgument>([&] { resolve_admin_account(o, nullptr, home_, "u", false); }, "Incorrect ssh public key value.");
  o = {};
  o.user_name = "";
  expect_error<InvalidArgument>([&] { resolve_admin_account(o, nullptr, home_, "u", false); }, "Please provide admin user name.");
}

TEST(SshKey, Validation) {
  EXPECT_TRUE(is_valid_ssh_rsa_key(kSshKey));
  EXPECT_FALSE(is_valid_ssh_rsa_key("ssh-dss AAAAB3NzaC1yc2EAAAADAQABAAAACQDHx8fHx8fHxw=="));
  EXPECT_FALSE(is_valid_ssh_rsa_key("ssh-rsa"));
  EXPECT_FALSE(is_valid_ssh_rsa_key("ssh-rsa !!!!"));
}

// The unit-test truth table of docs/behaviour.md §4.5.2 (effective name "account", key "key").
TEST(MountPatching, TruthTable) {
  std::map<std::string, std::string> keys = {{"account", "key"}, {"account1", "key1"}, {"account2", "key2"}};
  KeyLookup lookup = [&](const std::string& a) -> std::optional<std::string> {
    auto it = keys.find(a);
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
  EffectiveStorage s{"account", "key"};
  Json mv = {{"azureFileShares",
              {{{"accountName", "<AZURE_BATCHAI_STORAGE_ACCOUNT>"},
                {"azureFileUrl", "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/share1"},
                {"credentials", {{"accountKey", "<AZURE_BATCHAI_STORAGE_KEY>"}}},
                {"relativeMountPath", "s1"}},
               {{"azureFileUrl", "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/share2"},
                {"relativeMountPath", "s2"}},
               {{"accountName", "real"},
                {"azureFileUrl", "https://real.file.core.windows.net/x"},
                {"credentials", {{"accountKey", "realkey"}}},
                {"relativeMountPath", "s3"}},
               {{"azureFileUrl", "https://account1.file.core.windows.net/y"}, {"relativeMountPath", "s4"}}}},
             {"azureBlobFileSystems",
              {{{"accountName", "<AZURE_BATCHAI_STORAGE_ACCOUNT>"}, {"containerName", "c"}, {"relativeMountPath", "b1"}},
               {{"accountName", "account2"}, {"containerName", "c"}, {"relativeMountPath", "b2"}}}}};
  patch_mount_volumes(mv, s, lookup);
  const auto& afs = mv["azureFileShares"];
  EXPECT_EQ(afs[0]["accountName"], "account");
  EXPECT_EQ(afs[0]["azureFileUrl"], "https://account.file.core.windows.net/share1");
  EXPECT_EQ(afs[0]["credentials"]["accountKey"], "key");
  EXPECT_EQ(afs[1]["accountName"], "account");
  EXPECT_EQ(afs[1]["azureFileUrl"], "https://account.file.core.windows.net/share2");
  EXPECT_EQ(afs[1]["credentials"]["accountKey"], "key");
  EXPECT_EQ(afs[2]["accountName"], "real");
  EXPECT_EQ(afs[2]["credentials"]["accountKey"], "realkey");
  EXPECT_EQ(afs[3]["accountName"], "account1");
  EXPECT_EQ(afs[3]["credentials"]["accountKey"], "key1");
  EXPECT_EQ(mv["azureBlobFileSystems"][0]["accountName"], "account");
  EXPECT_EQ(mv["azureBlobFileSystems"][0]["credentials"]["accountKey"], "key");
  EXPECT_EQ(mv["azureBlobFileSystems"][1]["credentials"]["accountKey"], "key2");
}

TEST(MountPatching, Errors) {
  KeyLookup none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  Json no_url = {{"azureFileShares", {{{"relativeMountPath", "x"}}}}};
  expect_error<InvalidArgument>([&] { patch_mount_volumes(no_url, {"a", "k"}, none); },
                                "Azure File URL cannot absent or be empty");
  Json bad_url = {{"azureFileShares", {{{"azureFileUrl", "https://nodot/x"}}}}};
  expect_error<InvalidArgument>([&] { patch_mount_volumes(bad_url, {"a", "k"}, none); },
                                "Ill-formed Azure File URL \"https://nodot/x\"");
  Json blob = {{"azureBlobFileSystems", {{{"containerName", "c"}, {"credentials", {{"accountKey", "k"}}}}}}};
  expect_error<InvalidArgument>(
      [&] { patch_mount_volumes(blob, {"a", "k"}, none); },
      "Ill-formed Azure Blob File System reference in the configuration file - no account name provided.");
  Json placeholder = {{"azureFileShares",
                       {{{"azureFileUrl", "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/s"}}}}};
  expect_error<InvalidArgument>(
      [&] { patch_mount_volumes(placeholder, {"", ""}, none); },
      "Please configure Azure Storage account name via AZURE_BATCHAI_STORAGE_ACCOUNT or provide storage_account value "
      "in batchai section of your az configuration file.");
  Json unknown = {{"azureBlobFileSystems", {{{"accountName", "ghost"}, {"containerName", "c"}}}}};
  expect_error<InvalidArgument>([&] { patch_mount_volumes(unknown, {"a", "k"}, none); },
                                "Cannot find \"ghost\" storage account.");
  KeyLookup keyless = [](const std::string&) -> std::optional<std::string> { return std::string(); };
  expect_error<InvalidArgument>([&] { patch_mount_volumes(unknown, {"a", "k"}, keyless); },
                                "Cannot find a key for \"ghost\" storage account.");
  KeyLookup keyed = [](const std::string&) -> std::optional<std::string> { return std::string("k"); };
  Json key_placeholder = {{"azureBlobFileSystems",
                           {{{"accountName", "acc"}, {"containerName", "c"},
                             {"credentials", {{"accountKey", "<AZURE_BATCHAI_STORAGE_KEY>"}}}}}}};
  expect_error<InvalidArgument>(
      [&] { patch_mount_volumes(key_placeholder, {"acc", ""}, keyed); },
      "Please configure Azure Storage account key via AZURE_BATCHAI_STORAGE_KEY or provide storage_key value in "
      "batchai section of your az configuration file.");
}

TEST(MountVolumes, NormalizedShapeHidesKeys) {
  Json wire = {{"azureFileShares",
                {{{"accountName", "a"}, {"azureFileUrl", "https://a.file.core.windows.net/s"},
                  {"credentials", {{"accountKey", "secret"}}}, {"relativeMountPath", "afs"}}}}};
  Json out = normalize_mount_volumes(wire);
  EXPECT_TRUE(out["azureBlobFileSystems"].is_null());
  EXPECT_TRUE(out["fileServers"].is_null());
  EXPECT_TRUE(out["unmanagedFileSystems"].is_null());
  const Json& share = out["azureFileShares"][0];
  EXPECT_TRUE(share["credentials"]["accountKey"].is_null());
  EXPECT_TRUE(share["credentials"].contains("accountKeySecretReference"));
  EXPECT_EQ(share["fileMode"], "0777");
  EXPECT_EQ(share["directoryMode"], "0777");
  EXPECT_EQ(out.dump().find("secret"), std::string::npos);
}

TEST(VmSizes, KnownAndUnknown) {
  EXPECT_EQ(vm_size_info("STANDARD_NC6").vcpus, 6);
  EXPECT_EQ(vm_size_info("standard_nc6").family, "NC");
  EXPECT_EQ(vm_size_info("Standard_D16_v3").vcpus, 16);
  EXPECT_EQ(vm_size_info("Standard_F4").family, "F");
  auto unknown = vm_size_info("Standard_XY7");
  EXPECT_EQ(unknown.vcpus, 1);
  EXPECT_EQ(unknown.family, "XY");
}

class PathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(base_ / "share" / "sub");
    fs::create_directories(base_ / "outside");
  }
  test::TempDir tmp_{"batchai-cp-test"};
  fs::path base_ = tmp_.path();
};

TEST_F(PathTest, AcceptsPathsInside) {
  EXPECT_EQ(resolve_inside(base_ / "share", "sub/file.txt", "File path"), base_ / "share" / "sub" / "file.txt");
  EXPECT_EQ(resolve_inside(base_ / "share", "", "File path"), base_ / "share");
  EXPECT_EQ(resolve_inside(base_ / "share", "./sub//x", "File path"), base_ / "share" / "sub" / "x");
}

TEST_F(PathTest, RejectsDotDot) {
  EXPECT_THROW(resolve_inside(base_ / "share", "../outside/x", "File path"), InvalidArgument);
  EXPECT_THROW(resolve_inside(base_ / "share", "sub/../../x", "File path"), InvalidArgument);
  EXPECT_THROW(resolve_inside(base_ / "share", "..", "File path"), InvalidArgument);
}

TEST_F(PathTest, RejectsAbsolute) {
  EXPECT_THROW(resolve_inside(base_ / "share", "/etc/passwd", "File path"), InvalidArgument);
}

TEST_F(PathTest, RejectsSymlinksThatLeave) {
  fs::create_directory_symlink(base_ / "outside", base_ / "share" / "escape");
  EXPECT_THROW(resolve_inside(base_ / "share", "escape/x", "File path"), InvalidArgument);
  fs::create_directory_symlink(base_ / "share" / "sub", base_ / "share" / "inner");
  EXPECT_NO_THROW(resolve_inside(base_ / "share", "inner/x", "File path"));
}

TEST(MountRoot, Expansion) {
  EXPECT_EQ(expand_mount_root("$AZ_BATCHAI_MOUNT_ROOT/afs", "/n/mounts"), "/n/mounts/afs");
  EXPECT_EQ(expand_mount_root("${AZ_BATCHAI_MOUNT_ROOT}/afs", "/n/mounts"), "/n/mounts/afs");
  EXPECT_EQ(expand_mount_root("$AZ_BATCHAI_MOUNT_ROOTX", "/n/mounts"), "$AZ_BATCHAI_MOUNT_ROOTX");
}

}  // namespace
}  // namespace batchai::control_plane
