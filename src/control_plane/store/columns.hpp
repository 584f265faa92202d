// The store modules' own readers of a statement's rows (store/*.cpp only): every row's first
// column as a document, text or integer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "batchai/common/json_util.hpp"
#include "store/store.hpp"

namespace batchai::control_plane::detail {

inline Json column_docs(Statement& st) {
  Json out = Json::array();
  while (st.step()) out.push_back(Json::parse(st.text(0)));
  return out;
}

inline std::vector<std::string> column_texts(Statement& st) {
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.text(0));
  return out;
}

inline std::vector<std::int64_t> column_integers(Statement& st) {
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.integer(0));
  return out;
}

}  // namespace batchai::control_plane::detail
