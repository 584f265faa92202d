// `batchai storage account|share|directory|file|container|blob ...`: the az storage commands the
// Batch AI tutorial uses, on local folders under $BATCHAI_HOME/storage.
#include "commands/storage_commands.hpp"

#include <filesystem>

#include "commands/common.hpp"

namespace batchai::cli {
namespace {

void register_account(CLI::App& storage, CliContext& ctx) {
  CLI::App& account = add_group(storage, ctx, "account", "Manage storage accounts.");
  OptionSpec location;
  location.env = kDefaultLocationEnv;
  OptionSpec sku;
  sku.default_value = "Standard_RAGRS";
  sku.choices = {"Premium_LRS", "Standard_GRS", "Standard_LRS", "Standard_RAGRS", "Standard_ZRS"};
  OptionSpec kind;
  kind.default_value = "StorageV2";
  kind.choices = {"BlobStorage", "Storage", "StorageV2"};

  auto& create = add_command(account, ctx, "create", "Create a storage account.");
  create.option("--name,-n", "Storage account name (3-24 lower-case letters and digits).", required());
  add_resource_group(create)
      .option("--location,-l", "Location; defaults to the resource group's.", location)
      .option("--sku", "Storage account SKU.", sku)
      .option("--kind", "Storage account kind.", kind)
      .example("Create a storage account.", "batchai storage account create -n mystorageacct -g MyResourceGroup --sku Standard_LRS -l eastus")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage_accounts().create(a.str("resource-group"), a.str("name"), a.get("location"),
                                                          a.str("sku"), a.str("kind"));
      });

  auto& show = add_command(account, ctx, "show", "Show storage account properties.");
  show.option("--name,-n", "Storage account name.", required());
  add_resource_group(show, false)
      .show()
      .example("Show a storage account.", "batchai storage account show -n mystorageacct -g MyResourceGroup")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage_accounts().show(a.get("resource-group"), a.str("name"));
      });

  auto& list = add_command(account, ctx, "list", "List storage accounts.");
  add_resource_group(list, false)
      .example("List the storage accounts of a group.", "batchai storage account list -g MyResourceGroup")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage_accounts().list(a.get("resource-group"));
      });

  auto& del = add_command(account, ctx, "delete", "Delete a storage account.");
  del.option("--name,-n", "Storage account name.", required());
  add_resource_group(del, false)
      .confirmation()
      .example("Delete a storage account.", "batchai storage account delete -n mystorageacct -g MyResourceGroup -y")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        ctx.control_plane().storage_accounts().remove(a.get("resource-group"), a.str("name"));
        return std::nullopt;
      });

  CLI::App& keys = add_group(account, ctx, "keys", "Manage storage account keys.");
  auto& keys_list = add_command(keys, ctx, "list", "List the access keys of a storage account.");
  keys_list.option("--account-name,--name,-n", "Storage account name.", required());
  add_resource_group(keys_list, false)
      .example("Print the first key.",
               "batchai storage account keys list -n mystorageacct -g MyResourceGroup --query \"[0].value\" -o tsv")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage_accounts().keys(a.get("resource-group"), a.str("account-name"));
      });
}

void register_share_and_files(CLI::App& storage, CliContext& ctx) {
  CLI::App& share = add_group(storage, ctx, "share", "Manage file shares.");
  add_storage_auth(add_command(share, ctx, "create", "Create a file share.")
                       .option("--name,-n", "The file share name.", required()))
      .example("Create a share.", "batchai storage share create -n batchaisample --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().share_create(storage_auth(a), a.str("name"));
      });
  add_storage_auth(add_command(share, ctx, "delete", "Delete a file share.")
                       .option("--name,-n", "The file share name.", required()))
      .example("Delete a share.", "batchai storage share delete -n batchaisample --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().share_delete(storage_auth(a), a.str("name"));
      });
  add_storage_auth(add_command(share, ctx, "list", "List the file shares of an account."))
      .example("List shares.", "batchai storage share list --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> { return ctx.control_plane().storage().share_list(storage_auth(a)); });
  add_storage_auth(add_command(share, ctx, "exists", "Check whether a file share exists.")
                       .option("--name,-n", "The file share name.", required()))
      .example("Check a share.", "batchai storage share exists -n batchaisample --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().share_exists(storage_auth(a), a.str("name"));
      });

  CLI::App& dir = add_group(storage, ctx, "directory", "Manage directories in a file share.");
  OptionSpec optional_path;
  for (const char* verb : {"create", "delete"}) {
    std::string v = verb;
    add_storage_auth(add_command(dir, ctx, v, v == "create" ? "Create a directory in a share." : "Delete a directory.")
                         .option("--share-name,-s", "The file share name.", required())
                         .option("--name,-n", "The directory path within the share.", required()))
        .example(v == "create" ? "Create a directory." : "Delete a directory.",
                 "batchai storage directory " + v + " -s batchaisample -n cifar10 --account-name mystorageacct")
        .handler([&ctx, v](const Args& a) -> std::optional<Json> {
          auto& cp = ctx.control_plane();
          return v == "create" ? cp.storage().directory_create(storage_auth(a), a.str("share-name"), a.str("name"))
                               : cp.storage().directory_delete(storage_auth(a), a.str("share-name"), a.str("name"));
        });
  }
  add_storage_auth(add_command(dir, ctx, "list", "List the directories of a share folder.")
                       .option("--share-name,-s", "The file share name.", required())
                       .option("--name,-n", "Folder to list (default: the share root).", optional_path))
      .example("List directories.", "batchai storage directory list -s batchaisample --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().directory_list(storage_auth(a), a.str("share-name"), a.get("name").value_or(""));
      });

  CLI::App& file = add_group(storage, ctx, "file", "Manage files in a file share.");
  add_storage_auth(add_command(file, ctx, "upload", "Upload a file to a share.")
                       .option("--share-name,-s", "The file share name.", required())
                       .option("--source", "Path of the local file to upload.", required())
                       .option("--path,-p", "Destination path within the share (default: the file name).", optional_path))
      .example("Upload a script.",
               "batchai storage file upload -s batchaisample --source cifar10_cnn.py --path horovod --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().file_upload(storage_auth(a), a.str("share-name"), a.str("source"), a.get("path"));
      });
  add_storage_auth(add_command(file, ctx, "download", "Download a file from a share.")
                       .option("--share-name,-s", "The file share name.", required())
                       .option("--path,-p", "Path of the file within the share.", required())
                       .option("--dest", "Local destination (default: the file name in the current folder).",
                               optional_path))
      .example("Download a log.",
               "batchai storage file download -s batchaisample -p logs/stdout.txt --dest ./stdout.txt --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        std::string path = a.str("path");
        std::filesystem::path dest = a.get("dest").value_or(std::filesystem::path(path).filename().string());
        ctx.control_plane().storage().file_download(storage_auth(a), a.str("share-name"), path, dest);
        return std::nullopt;
      });
  add_storage_auth(add_command(file, ctx, "list", "List files and directories in a share folder.")
                       .option("--share-name,-s", "The file share name.", required())
                       .option("--path,-p", "Folder within the share (default: the root).", optional_path))
      .example("List a folder.", "batchai storage file list -s batchaisample -p horovod --account-name mystorageacct -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().file_list(storage_auth(a), a.str("share-name"), a.get("path"));
      });
  add_storage_auth(add_command(file, ctx, "delete", "Delete a file from a share.")
                       .option("--share-name,-s", "The file share name.", required())
                       .option("--path,-p", "Path of the file within the share.", required()))
      .example("Delete a file.", "batchai storage file delete -s batchaisample -p horovod/old.py --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().file_delete(storage_auth(a), a.str("share-name"), a.str("path"));
      });
}

void register_containers_and_blobs(CLI::App& storage, CliContext& ctx) {
  CLI::App& container = add_group(storage, ctx, "container", "Manage blob containers.");
  add_storage_auth(add_command(container, ctx, "create", "Create a blob container.")
                       .option("--name,-n", "The container name.", required()))
      .example("Create a container.", "batchai storage container create -n batchaicontainer --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().container_create(storage_auth(a), a.str("name"));
      });
  add_storage_auth(add_command(container, ctx, "delete", "Delete a blob container.")
                       .option("--name,-n", "The container name.", required()))
      .example("Delete a container.", "batchai storage container delete -n batchaicontainer --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().container_delete(storage_auth(a), a.str("name"));
      });
  add_storage_auth(add_command(container, ctx, "list", "List the blob containers of an account."))
      .example("List containers.", "batchai storage container list --account-name mystorageacct -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().container_list(storage_auth(a));
      });

  CLI::App& blob = add_group(storage, ctx, "blob", "Manage blobs.");
  OptionSpec optional;
  add_storage_auth(add_command(blob, ctx, "upload", "Upload a file as a blob.")
                       .option("--container-name,-c", "The container name.", required())
                       .option("--file,-f", "Path of the local file.", required())
                       .option("--name,-n", "The blob name.", required()))
      .example("Upload a file.",
               "batchai storage blob upload -c batchaicontainer -f data.bin -n cifar10/data.bin --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().blob_upload(storage_auth(a), a.str("container-name"), a.str("file"), a.str("name"));
      });
  add_storage_auth(add_command(blob, ctx, "upload-batch", "Upload the files of a folder as blobs.")
                       .option("--destination,-d", "The container name.", required())
                       .option("--source,-s", "The local folder to upload.", required())
                       .option("--pattern", "Only files matching this pattern (e.g. *.py).", optional))
      .example("Upload a folder.", "batchai storage blob upload-batch -d batchaicontainer -s ./data --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().blob_upload_batch(storage_auth(a), a.str("destination"), a.str("source"),
                                                     a.get("pattern"));
      });
  add_storage_auth(add_command(blob, ctx, "download", "Download a blob to a file.")
                       .option("--container-name,-c", "The container name.", required())
                       .option("--name,-n", "The blob name.", required())
                       .option("--file,-f", "Local destination path.", required()))
      .example("Download a blob.",
               "batchai storage blob download -c batchaicontainer -n cifar10/data.bin -f data.bin --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        ctx.control_plane().storage().blob_download(storage_auth(a), a.str("container-name"), a.str("name"), a.str("file"));
        return std::nullopt;
      });
  add_storage_auth(add_command(blob, ctx, "list", "List the blobs of a container.")
                       .option("--container-name,-c", "The container name.", required())
                       .option("--prefix", "Only blobs whose names start with this prefix.", optional))
      .example("List blobs.", "batchai storage blob list -c batchaicontainer --account-name mystorageacct -o table")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().blob_list(storage_auth(a), a.str("container-name"), a.get("prefix"));
      });
  add_storage_auth(add_command(blob, ctx, "delete", "Delete a blob.")
                       .option("--container-name,-c", "The container name.", required())
                       .option("--name,-n", "The blob name.", required()))
      .example("Delete a blob.", "batchai storage blob delete -c batchaicontainer -n cifar10/data.bin --account-name mystorageacct")
      .handler([&ctx](const Args& a) -> std::optional<Json> {
        return ctx.control_plane().storage().blob_delete(storage_auth(a), a.str("container-name"), a.str("name"));
      });
}

}  // namespace

void register_storage_commands(CLI::App& storage, CliContext& ctx) {
  register_account(storage, ctx);
  register_share_and_files(storage, ctx);
  register_containers_and_blobs(storage, ctx);
}

}  // namespace batchai::cli
