// The file_servers table beyond the shared lookup (store/rows.hpp: require_file_server_doc):
// file servers made, listed, ready with time and deleted (store/file_servers.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/rows.hpp"

namespace batchai::control_plane::detail {

// `ready_us`: when it is provisioned; `pending` while that is still to come.
void insert_file_server(Store& store, std::int64_t workspace_id, const std::string& name, const Json& doc,
                        std::int64_t ready_us, bool pending);
// The pending file servers whose time has come: row id, document and when they became ready.
struct ReadyFileServer {
  std::int64_t id = 0;
  Json doc;
  std::int64_t ready_us = 0;
};
std::vector<ReadyFileServer> ready_file_servers(Store& store, std::int64_t now_us);
// Stores the document of a file server that is no longer pending.
void settle_file_server(Store& store, std::int64_t id, const Json& doc);
Json file_server_docs(Store& store, std::int64_t workspace_id);  // by name
std::optional<std::int64_t> file_server_id(Store& store, std::int64_t workspace_id, const std::string& name);
void delete_file_server(Store& store, std::int64_t id);

}  // namespace batchai::control_plane::detail
