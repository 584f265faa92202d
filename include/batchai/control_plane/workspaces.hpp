// `batchai workspace ...`. Deleting a workspace fails the jobs on its clusters and removes its
// clusters, file servers and experiments with their jobs (docs/behaviour.md §3).
#pragma once
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;
class JobEnding;

class Workspaces {
 public:
  Workspaces(const Context& cx, Reconciler& reconciler, JobEnding& ending)
      : cx_(cx), reconciler_(reconciler), ending_(ending) {}

  // Create-or-update: an existing workspace is returned as it is, with `tags` (when given) set.
  Json create(const std::string& resource_group, const std::string& name, const std::optional<std::string>& location,
              const std::optional<Json>& tags = std::nullopt);
  // PATCH (WorkspaceUpdateParameters): replaces the tags (tag_rules.hpp); the workspace as stored.
  Json update_tags(const WorkspaceRef& ref, const Json& tags);
  Json show(const WorkspaceRef& ref);
  Json list(const std::optional<std::string>& resource_group);
  // A page of list(), keyed by "group/name" (lower-case).
  Page list_page(const std::optional<std::string>& resource_group, const PageRequest& page);
  void remove(const WorkspaceRef& ref);

 private:
  const Context& cx_;
  Reconciler& reconciler_;
  JobEnding& ending_;
};

}  // namespace batchai::control_plane
