// Pages of the lists (list_pages.cpp): each table's rows in its list order after a keyset
// position, `limit` rows at most (the caller asks for one more than it shows: that row only says
// whether another page follows). Each row is its key and its stored document as text.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace batchai::control_plane::detail {

struct KeyedDoc {
  std::string key;  // what the next page starts after
  std::string doc;
};
std::vector<KeyedDoc> group_page(Store& store, const std::string& after, std::int64_t limit);
std::vector<KeyedDoc> account_page(Store& store, const std::optional<std::string>& group, const std::string& after,
                                   std::int64_t limit);
// Keyed "group/name" (lower-cased), after the position (`group_after`, `name_after`).
std::vector<KeyedDoc> workspace_page(Store& store, const std::optional<std::string>& group,
                                     const std::string& group_after, const std::string& name_after, std::int64_t limit);
std::vector<KeyedDoc> cluster_page(Store& store, std::int64_t workspace_id, const std::string& after, std::int64_t limit);
std::vector<KeyedDoc> file_server_page(Store& store, std::int64_t workspace_id, const std::string& after,
                                       std::int64_t limit);
// The experiment's jobs by row id after `after_id`: row id and document text.
std::vector<std::pair<std::int64_t, std::string>> job_page(Store& store, std::int64_t experiment_id,
                                                            std::int64_t after_id, std::int64_t limit);

}  // namespace batchai::control_plane::detail
