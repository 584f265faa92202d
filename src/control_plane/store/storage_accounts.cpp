// The storage_accounts table (store/rows.hpp, store/resources.hpp).
#include "store/columns.hpp"
#include "store/resources.hpp"

#include "batchai/common/ids.hpp"

namespace batchai::control_plane::detail {

std::optional<std::string> account_key(Store& store, const std::string& account) {
  return store.read([&]() -> std::optional<std::string> {
    auto st = store.prepare("SELECT key1 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(account));
    if (!st.step()) return std::nullopt;
    return st.text(0);
  });
}

std::vector<std::string> account_keys(Store& store, const std::string& account) {
  return store.read([&] {
    auto st = store.prepare("SELECT key1, key2 FROM storage_accounts WHERE name_lc = ?");
    st.bind(1, to_lower(account));
    return st.step() ? std::vector<std::string>{st.text(0), st.text(1)} : std::vector<std::string>{};
  });
}

std::optional<AccountRow> find_account(Store& store, const std::string& name) {
  auto st = store.prepare("SELECT rg_lc, key1, key2, doc FROM storage_accounts WHERE name_lc = ?");
  st.bind(1, to_lower(name));
  if (!st.step()) return std::nullopt;
  return AccountRow{st.text(0), st.text(1), st.text(2), parse_doc(st.text(3))};
}

void insert_account(Store& store, const std::string& name, const std::string& group, const std::string& location,
                    const std::pair<std::string, std::string>& keys, const Json& doc) {
  store.prepare("INSERT INTO storage_accounts(name_lc, rg_lc, location, key1, key2, doc) VALUES (?,?,?,?,?,?)")
      .bind(1, to_lower(name)).bind(2, to_lower(group)).bind(3, location).bind(4, keys.first).bind(5, keys.second)
      .bind(6, dump_doc(doc)).run();
}

Json account_docs(Store& store, const std::optional<std::string>& group) {
  auto st = store.prepare("SELECT doc FROM storage_accounts WHERE ?1 IS NULL OR rg_lc = ?1 ORDER BY name_lc");
  st.bind(1, group ? std::optional<std::string>(to_lower(*group)) : std::nullopt);
  return column_docs(st);
}

void delete_account(Store& store, const std::string& name) {
  store.prepare("DELETE FROM storage_accounts WHERE name_lc = ?").bind(1, to_lower(name)).run();
}

std::vector<std::string> accounts_of_group(Store& store, const std::string& group) {
  auto st = store.prepare("SELECT name_lc FROM storage_accounts WHERE rg_lc = ?");
  st.bind(1, to_lower(group));
  return column_texts(st);
}

std::optional<std::string> first_account_in(Store& store, const std::string& group, const std::string& location) {
  auto st = store.prepare("SELECT name_lc FROM storage_accounts WHERE rg_lc = ? AND location = ? ORDER BY name_lc LIMIT 1");
  st.bind(1, group).bind(2, location);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

}  // namespace batchai::control_plane::detail
