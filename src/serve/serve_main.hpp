// The whole of `batchai serve` inside the plugin: the control plane from the environment, the
// server, the lines to paste printed on stdout, then serving until SIGINT/SIGTERM (exit 0).
#pragma once
#include "batchai/serve/serve_plugin.hpp"

namespace batchai::serve {

int run_serve_main(const ServeOptions& options);

}  // namespace batchai::serve
