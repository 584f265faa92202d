// batchai_train_tool: a stand-alone driver of `batchai train` (same options, same code path
// through register_train_command) for benchmarks and MPI runs before the full CLI links it.
#include <CLI/CLI.hpp>
#include <iostream>

#include "batchai/common/errors.hpp"

namespace batchai::cli {
void register_train_command(CLI::App& root);
}

int main(int argc, char** argv) {
  CLI::App app("batchai train driver");
  app.require_subcommand(1);
  batchai::cli::register_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const batchai::Error& e) {
    std::cerr << "ERROR: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "ERROR: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
