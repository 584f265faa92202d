// The file_servers table (store/rows.hpp, store/file_servers.hpp).
#include "store/columns.hpp"
#include "store/file_servers.hpp"

#include "batchai/common/ids.hpp"

namespace batchai::control_plane::detail {

void file_server_not_found(const std::string& name) {
  throw NotFound("The specified file server " + name + " is not found", "FileServerNotFound");
}

Json require_file_server_doc(Store& store, const WorkspaceRef& ref, const std::string& name) {
  auto st = store.prepare(
      "SELECT f.doc FROM file_servers f JOIN workspaces w ON w.id = f.workspace_id "
      "WHERE w.rg_lc = ? AND w.name_lc = ? AND f.name_lc = ?");
  st.bind(1, to_lower(ref.resource_group)).bind(2, to_lower(ref.workspace)).bind(3, to_lower(name));
  if (!st.step()) file_server_not_found(name);
  return parse_doc(st.text(0));
}

void insert_file_server(Store& store, std::int64_t workspace_id, const std::string& name, const Json& doc,
                        std::int64_t ready_us, bool pending) {
  store.prepare("INSERT INTO file_servers(workspace_id, name_lc, name, doc, ready_us, pending) VALUES (?,?,?,?,?,?)")
      .bind(1, workspace_id).bind(2, to_lower(name)).bind(3, name).bind(4, dump_doc(doc)).bind(5, ready_us)
      .bind(6, pending ? 1 : 0).run();
}

std::vector<ReadyFileServer> ready_file_servers(Store& store, std::int64_t now_us) {
  auto st = store.prepare("SELECT id, doc, ready_us FROM file_servers WHERE pending = 1 AND ready_us <= ?");
  st.bind(1, now_us);
  std::vector<ReadyFileServer> out;
  while (st.step()) out.push_back({st.integer(0), parse_doc(st.text(1)), st.integer(2)});
  return out;
}

void settle_file_server(Store& store, std::int64_t id, const Json& doc) {
  store.prepare("UPDATE file_servers SET doc = ?, pending = 0 WHERE id = ?").bind(1, dump_doc(doc)).bind(2, id).run();
}

Json file_server_docs(Store& store, std::int64_t workspace_id) {
  auto st = store.prepare("SELECT doc FROM file_servers WHERE workspace_id = ? ORDER BY name_lc");
  st.bind(1, workspace_id);
  return column_docs(st);
}

std::optional<std::int64_t> file_server_id(Store& store, std::int64_t workspace_id, const std::string& name) {
  auto st = store.prepare("SELECT id FROM file_servers WHERE workspace_id = ? AND name_lc = ?");
  st.bind(1, workspace_id).bind(2, to_lower(name));
  if (!st.step()) return std::nullopt;
  return st.integer(0);
}

void delete_file_server(Store& store, std::int64_t id) {
  store.prepare("DELETE FROM file_servers WHERE id = ?").bind(1, id).run();
}

}  // namespace batchai::control_plane::detail
