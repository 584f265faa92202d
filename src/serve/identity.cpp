#include "identity.hpp"

#include <cctype>
#include <system_error>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "batchai/common/json_util.hpp"
#include "http/encoding.hpp"
#include "http/private_file.hpp"

namespace batchai::serve {
namespace {

bool plain_text(const std::string& s, std::size_t min, std::size_t max) {
  if (s.size() < min || s.size() > max) return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '-' || c == '_')) return false;
  return true;
}

Identity parse(const std::filesystem::path& file) {
  const Json doc = load_json_file(file);
  auto field = [&](const char* key) {
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_string())
      throw InvalidArgument("The server credentials " + file.string() + " lack \"" + key +
                            "\": remove the file and start batchai serve again to make new ones.");
    return doc[key].get<std::string>();
  };
  Identity id{field("tenantId"), field("clientId"), field("clientSecret"), {}};
  auto key = hex_decode(field("tokenKey"));
  if (!plain_text(id.tenant_id, 36, 36) || !plain_text(id.client_id, 1, 64) || !plain_text(id.client_secret, 16, 128) ||
      !key || key->size() != 32)
    throw InvalidArgument("The server credentials " + file.string() +
                          " are malformed: remove the file and start batchai serve again to make new ones.");
  id.token_key = *key;
  return id;
}

}  // namespace

Identity load_or_create_identity(const std::filesystem::path& dir) {
  make_private_dir(dir);
  const std::filesystem::path file = dir / "credentials.json";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    // The secret never starts with "-": `az login -p -x...` would read it as an option.
    Identity id{new_uuid(), "batchai-" + hex_encode(random_bytes(6)), "s" + base64url_encode(random_bytes(30)),
                random_bytes(32)};
    Json doc = {{"tenantId", id.tenant_id},
                {"clientId", id.client_id},
                {"clientSecret", id.client_secret},
                {"tokenKey", hex_encode(id.token_key)}};
    write_private_file(file, doc.dump(2) + "\n");
  }
  return parse(file);
}

}  // namespace batchai::serve
