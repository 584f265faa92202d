// `batchai serve [--port N] [--host ADDR] [--cert F --key F]` and `batchai serve ui-url`: parses the options into
// batchai::serve::ServeOptions and hands them to libbatchai_serve.so, loaded from where the
// composition root located it only now, so that no other command maps Boost.Beast's server or OpenSSL
// (docs/serve.md).
#include "commands/serve_command.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <memory>
#include <string>

#include "batchai/common/errors.hpp"
#include "batchai/serve/serve_plugin.hpp"
#include "command.hpp"
#include "plugin_loader.hpp"

namespace batchai::cli {
namespace {

int run_serve_plugin(const std::filesystem::path& plugin, const serve::ServeOptions& options) {
  // RTLD_LOCAL: the plugin exports only its entry; nothing of it joins the global scope.
  const auto entry = reinterpret_cast<serve::ServePluginEntry>(
      load_plugin_entry(plugin, serve::kServePluginEntry, RTLD_LOCAL, "batchai"));
  serve::ServePluginError error;
  const int code = entry(serve::kServePluginAbi, sizeof(serve::ServeOptions), &options, &error);
  if (code == serve::kServePluginAbiMismatch)
    throw SystemError("The plugin " + plugin.string() + " was built for another batchai: " +
                      plugin_rebuild_hint(plugin, "batchai") + ".");
  if (error.thrown) throw PluginError(error.message, error.code, error.exit_code);
  return code;
}

}  // namespace

void register_serve_command(CLI::App& root, CliContext& ctx) {
  auto o = std::make_shared<serve::ServeOptions>();
  Command& command = add_command(root, ctx, "serve",
                                 "Serve the Batch AI ARM REST API (2018-05-01) over HTTPS for az and the Azure SDK.");
  command.arguments(ArgumentStyle::kNative);
  CLI::App* cmd = &command.app();
  cmd->add_option("--port", o->port, "TCP port (0: any free port; the one chosen is printed)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", o->host, "Address to listen on (loopback unless told otherwise)")->capture_default_str();
  cmd->add_option("--cert", o->cert_file,
                  "PEM certificate (default: a self-signed one made under $BATCHAI_HOME/serve)");
  cmd->add_option("--key", o->key_file, "PEM private key of --cert");
  cmd->add_option("--access-log", o->access_log,
                  "File of one line per request with the server's time on it (default: "
                  "$BATCHAI_HOME/serve/access.log; 16 MiB, then it rotates to FILE.1)");
  cmd->add_flag("--no-access-log", o->no_access_log, "Write no access log")->excludes("--access-log");

  // `batchai serve ui-url [--port P]`: a fresh dashboard link from the home's identity, made by
  // the plugin (which owns the signing) without starting a server.
  auto u = std::make_shared<serve::ServeOptions>();
  u->mode = serve::ServeMode::kUiUrl;
  u->port = 0;
  Command& ui_url = add_command(*cmd, ctx, "ui-url",
                                "Print a new one-time dashboard login link of this home's server (valid 10 minutes).");
  ui_url.arguments(ArgumentStyle::kNative);
  ui_url.app().add_option("--port", u->port, "The server's port (default: the one the running server wrote under "
                                             "$BATCHAI_HOME/serve)")
      ->check(CLI::Range(1, 65535));
  ui_url.handler([u, &ctx](const Args&) { return CommandResult::exit_code_only(run_serve_plugin(ctx.plugins().serve, *u)); });
  // CLI11 runs a parent's callback after its subcommand's, so `serve` is the command selected
  // even for `serve ui-url`: it hands over when its subcommand was given.
  CLI::App* ui_app = &ui_url.app();
  command.handler([o, u, ui_app, &ctx](const Args&) {
    return CommandResult::exit_code_only(run_serve_plugin(ctx.plugins().serve, ui_app->parsed() ? *u : *o));
  });
}

}  // namespace batchai::cli
