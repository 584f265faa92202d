// Control-plane latency figures on a scratch $BATCHAI_HOME: open + `workspace show` (a fresh
// process each time in real use), creating and listing 10,000 experiments, cluster show.
// Usage: control_plane_bench [experiments=10000]
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "batchai/control_plane/control_plane.hpp"
#include "store/store.hpp"

using namespace batchai;
using namespace batchai::control_plane;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int experiments = argc > 1 ? std::atoi(argv[1]) : 10000;
  char tmpl[] = "/tmp/batchai-cp-bench-XXXXXX";
  std::filesystem::path home = ::mkdtemp(tmpl);
  Settings s;
  s.home = home / "home";
  s.provisioning_delay = Micros(0);
  s.node_preparation_delay = Micros(0);
  auto clock = std::make_shared<SystemClock>();
  {
    auto cp = ControlPlane::open(s, clock);
    cp->groups().create("rg", "eastus", std::nullopt);
    cp->workspaces().create("rg", "ws", std::nullopt);
    auto t0 = std::chrono::steady_clock::now();
    // One transaction for setup speed; each create is its own transaction in real use.
    cp->store().write([&] {
      for (int i = 0; i < experiments; ++i) cp->experiments().create({"rg", "ws"}, "exp" + std::to_string(i));
    });
    std::printf("create %d experiments (one transaction): %.1f ms\n", experiments, ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) cp->experiments().create({"rg", "ws"}, "single" + std::to_string(i));
    std::printf("experiment create (own transaction each): %.3f ms\n", ms_since(t0) / 200);
    ClusterCreateOptions o;
    o.where = {"rg", "ws"};
    o.name = "c";
    o.vm_size = "Standard_NC6";
    o.target = 4;
    o.admin.user_name = "u";
    o.admin.password = "p";
    cp->clusters().create(o);
    cp->clusters().show({"rg", "ws"}, "c");
  }
  for (int round = 0; round < 3; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    auto cp = ControlPlane::open(s, clock);
    double open_ms = ms_since(t0);
    auto doc = cp->workspaces().show({"rg", "ws"});
    double show_ms = ms_since(t0);
    auto t1 = std::chrono::steady_clock::now();
    auto list = cp->experiments().list({"rg", "ws"});
    double list_ms = ms_since(t1);
    auto t2 = std::chrono::steady_clock::now();
    std::string text = list.dump(2);
    double dump_ms = ms_since(t2);
    auto t3 = std::chrono::steady_clock::now();
    cp->clusters().show({"rg", "ws"}, "c");
    double cluster_ms = ms_since(t3);
    std::printf("round %d: open %.2f ms, open+workspace show %.2f ms, experiment list (%zu) %.1f ms "
                "(+ dump %.1f ms), cluster show %.2f ms\n",
                round, open_ms, show_ms, list.size(), list_ms, dump_ms, cluster_ms);
  }
  std::error_code ec;
  std::filesystem::remove_all(home, ec);
  return 0;
}
