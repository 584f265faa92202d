// `batchai experiment ...`. Deleting an experiment removes its jobs with it.
#pragma once
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class ControlPlane;

class Experiments {
 public:
  explicit Experiments(ControlPlane& cp) : cp_(cp) {}

  Json create(const WorkspaceRef& ref, const std::string& name);
  Json show(const WorkspaceRef& ref, const std::string& name);
  Json list(const WorkspaceRef& ref);
  Page list_page(const WorkspaceRef& ref, const PageRequest& page);  // keyed by name
  void remove(const WorkspaceRef& ref, const std::string& name);

 private:
  ControlPlane& cp_;
};

}  // namespace batchai::control_plane
