// The executable's one composition function (docs/architecture.md: no global singletons).
#include "compose.hpp"

#include "batchai/common/clock.hpp"
#include "batchai/common/process.hpp"
#include "batchai/control_plane/control_plane.hpp"

namespace batchai::cli {

std::unique_ptr<CliContext> compose() {
  std::shared_ptr<Clock> clock = make_process_clock();
  std::shared_ptr<ProcessLauncher> launcher = make_posix_process_launcher();
  // Opened on first use: help and argument errors never create or lock the store.
  auto factory = [clock, launcher] {
    return control_plane::ControlPlane::open(control_plane::Settings::from_environment(),
                                             control_plane::Services{clock, launcher});
  };
  return std::make_unique<CliContext>(std::move(factory), std::move(launcher));
}

}  // namespace batchai::cli
