// `batchai experiment ...`. Deleting an experiment removes its jobs with it.
#pragma once
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;
class JobEnding;

class Experiments {
 public:
  Experiments(const Context& cx, Reconciler& reconciler, JobEnding& ending)
      : cx_(cx), reconciler_(reconciler), ending_(ending) {}

  Json create(const WorkspaceRef& ref, const std::string& name);
  Json show(const WorkspaceRef& ref, const std::string& name);
  Json list(const WorkspaceRef& ref);
  Page list_page(const WorkspaceRef& ref, const PageRequest& page);  // keyed by name
  void remove(const WorkspaceRef& ref, const std::string& name);

 private:
  const Context& cx_;
  Reconciler& reconciler_;
  JobEnding& ending_;
};

}  // namespace batchai::control_plane
