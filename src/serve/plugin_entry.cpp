// The entry point of libbatchai_serve.so (see batchai/serve/serve_plugin.hpp): the executable
// dlopens this plugin only for `batchai serve`, so Boost.Asio's transport and OpenSSL load only then.
#include "batchai/common/plugin_guard.hpp"
#include "batchai/serve/serve_plugin.hpp"
#include "serve_main.hpp"

extern "C" __attribute__((visibility("default"))) int batchai_serve_main(int abi, std::size_t options_size,
                                                                         const batchai::serve::ServeOptions* options,
                                                                         batchai::serve::ServePluginError* error) {
  using batchai::serve::kServePluginAbi;
  if (abi != kServePluginAbi || options_size != sizeof(batchai::serve::ServeOptions) || options == nullptr ||
      error == nullptr)
    return batchai::serve::kServePluginAbiMismatch;
  // Exceptions stay on this side: their type information is hidden in this plugin.
  return batchai::run_guarded(*error, "batchai serve", [&] { return batchai::serve::run_serve_main(*options); });
}
