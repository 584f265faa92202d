// `az group ...`: resource groups. Deleting one ends the jobs of its workspaces and removes
// everything inside it (docs/behaviour.md §3).
#pragma once
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;
class JobEnding;

class Groups {
 public:
  Groups(const Context& cx, Reconciler& reconciler, JobEnding& ending)
      : cx_(cx), reconciler_(reconciler), ending_(ending) {}

  Json create(const std::string& name, const std::string& location, const std::optional<Json>& tags);
  // PATCH: replaces the group's tags (tag_rules.hpp); the group as stored.
  Json update_tags(const std::string& name, const Json& tags);
  Json show(const std::string& name);
  Json list();
  Page list_page(const PageRequest& page);  // list() a page at a time, keyed by name
  bool exists(const std::string& name);
  void remove(const std::string& name);  // cascades to everything inside

 private:
  const Context& cx_;
  Reconciler& reconciler_;
  JobEnding& ending_;
};

}  // namespace batchai::control_plane
