// `batchai file-server ...`: simulated NFS servers (a folder that clusters and jobs mount).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/control_plane/list_page.hpp"
#include "batchai/control_plane/options.hpp"

namespace batchai::control_plane {

class Context;
class Reconciler;

class FileServers {
 public:
  FileServers(const Context& cx, Reconciler& reconciler)
      : cx_(cx), reconciler_(reconciler) {}

  std::optional<Json> create(const FileServerCreateOptions& options);  // nullopt with --no-wait
  Json show(const WorkspaceRef& ref, const std::string& name);
  Json list(const WorkspaceRef& ref);
  Page list_page(const WorkspaceRef& ref, const PageRequest& page);  // keyed by name
  void remove(const WorkspaceRef& ref, const std::string& name);

 private:
  const Context& cx_;
  Reconciler& reconciler_;
};

}  // namespace batchai::control_plane
