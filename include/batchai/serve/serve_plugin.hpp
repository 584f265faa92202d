// The serve plugin's ABI (docs/serve.md, docs/architecture.md): `batchai serve` parses its
// options in the executable and hands them to libbatchai_serve.so, loaded only then, so that no
// other command maps Boost.Beast's server or OpenSSL. Plain data only crosses the boundary.
#pragma once
#include <cstddef>
#include <string>

namespace batchai::serve {

// The plugin's file name; the executable looks for it beside itself only.
constexpr const char* kServePluginFile = "libbatchai_serve.so";
// Its one exported symbol, of type ServePluginEntry.
constexpr const char* kServePluginEntry = "batchai_serve_main";
// Raised whenever ServeOptions, ServePluginError or the entry's signature change.
constexpr int kServePluginAbi = 3;
// What the entry returns, touching nothing else, when `abi` or `options_size` is not its own.
constexpr int kServePluginAbiMismatch = -1;

// What the plugin is asked to do.
enum class ServeMode {
  kServe,  // `batchai serve`: serve until a signal
  kUiUrl,  // `batchai serve ui-url [--port P]`: print a fresh dashboard login link and return
};

// `batchai serve [--port N] [--host ADDR] [--cert F --key F]` and `batchai serve ui-url [--port P]`.
struct ServeOptions {
  ServeMode mode = ServeMode::kServe;
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8443;                 // 0: any free port (the one chosen is printed); ui-url: 0 = the
                                   // port the home's running server wrote to $BATCHAI_HOME/serve/port
  std::string cert_file;           // both empty: a self-signed certificate under $BATCHAI_HOME/serve
  std::string key_file;
  std::string access_log;          // empty: $BATCHAI_HOME/serve/access.log
  bool no_access_log = false;
};

// What the entry reports when serving threw: exceptions do not cross the boundary; the
// executable turns this back into a batchai::Error with the same exit code.
struct ServePluginError {
  bool thrown = false;
  int exit_code = 1;
  std::string code = "Error";
  std::string message;
};

// Serves until SIGINT/SIGTERM; returns the exit code (0 after a signal).
using ServePluginEntry = int (*)(int abi, std::size_t options_size, const ServeOptions* options,
                                 ServePluginError* error);

}  // namespace batchai::serve
