// What every part of the control plane works with, made once by ControlPlane and handed to each
// service, engine and rule explicitly: the settings, the store, the clock, the node layout and
// the process launcher, plus the trash of folders removed after their transaction commits.
#pragma once
#include <cstdint>

#include "batchai/common/clock.hpp"
#include "batchai/control_plane/node_layout.hpp"
#include "batchai/control_plane/settings.hpp"

namespace batchai {
class ProcessLauncher;
}

namespace batchai::control_plane {

class Store;

class Context {
 public:
  Context(const Settings& settings, Store& store, const Clock& clock, ProcessLauncher* launcher)
      : settings_(settings), store_(store), clock_(clock), layout_(settings.home, settings.shared_dir()), launcher_(launcher) {}

  const Settings& settings() const { return settings_; }
  Store& store() const { return store_; }
  const Clock& clock() const { return clock_; }
  std::int64_t now_us() const { return clock_.now().time_since_epoch().count(); }
  const NodeLayout& layout() const { return layout_; }
  // SystemError when the control plane was opened without one (a tool that only reads and writes rows).
  ProcessLauncher& launcher() const;
  // Removes the folders deletes queued in the trash table (after their transaction committed).
  void empty_trash() const;

 private:
  const Settings& settings_;
  Store& store_;
  const Clock& clock_;
  NodeLayout layout_;
  ProcessLauncher* launcher_;
};

}  // namespace batchai::control_plane
