// Seeds $BATCHAI_HOME with a group, a workspace and N experiments through the control-plane
// library (one process instead of N `batchai experiment create` launches), for tests/bench/cli/run.sh.
// Usage: batchai_cli_seed <experiments> [group] [workspace]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "batchai/common/clock.hpp"
#include "batchai/control_plane/control_plane.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <experiments> [group] [workspace]\n", argv[0]);
    return 2;
  }
  const int count = std::atoi(argv[1]);
  const std::string group = argc > 2 ? argv[2] : "benchGroup";
  const std::string workspace = argc > 3 ? argv[3] : "benchWks";
  using batchai::control_plane::ControlPlane;
  using batchai::control_plane::Settings;
  auto start = std::chrono::steady_clock::now();
  auto cp = ControlPlane::open(Settings::from_environment(), batchai::make_process_clock());
  if (!cp->groups().exists(group)) cp->groups().create(group, "eastus", std::nullopt);
  cp->workspaces().create(group, workspace, std::string("eastus"));
  for (int i = 0; i < count; ++i) cp->experiments().create({group, workspace}, "exp" + std::to_string(i));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("seeded %d experiments in %.1f s\n", count, seconds);
  return 0;
}
