// The tests' own SharedKey signer, written from the Storage docs (independent of the server's
// src/serve/shared_key.cpp): the string to sign for what the storage tests put on the wire
// (PUT and POST carry an octet stream), HMAC-SHA256 under the account's key, standard base64.
#pragma once
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <map>
#include <string>

#include "storage/shared_key.hpp"  // base64_decode

namespace batchai::serve {

// Standard base64 by OpenSSL (independent of the server's encoder).
inline std::string b64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// The signature of a request whose body is `body_size` bytes (0: none, or chunked) and whose
// headers are `headers` (x-ms-*, If-None-Match and Range are signed).
template <class Headers>
std::string shared_key_signature(const std::string& method, const std::string& target, std::size_t body_size,
                                 const Headers& headers, const std::string& key_b64, const std::string& account) {
  auto get = [&](const char* n) {
    auto it = headers.find(n);
    return it == headers.end() ? std::string() : it->second;
  };
  const bool has_body = method == "PUT" || method == "POST";
  std::string s = method + "\n\n\n" + (has_body && body_size > 0 ? std::to_string(body_size) : "") + "\n\n" +
                  (has_body ? "application/octet-stream" : "") + "\n\n\n\n" + get("If-None-Match") + "\n\n" +
                  get("Range") + "\n";
  std::map<std::string, std::string> ms;
  for (const auto& [n, v] : headers)
    if (n.rfind("x-ms-", 0) == 0) ms[n] = v;
  for (const auto& [n, v] : ms) s += n + ":" + v + "\n";
  const auto q = target.find('?');
  s += "/" + account + target.substr(0, q);
  std::map<std::string, std::string> query;
  for (std::string rest = q == std::string::npos ? "" : target.substr(q + 1); !rest.empty();) {
    const auto amp = rest.find('&');
    const std::string kv = rest.substr(0, amp);
    query[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
  }
  for (const auto& [n, v] : query) s += "\n" + n + ":" + v;
  const std::string raw = base64_decode(key_b64).value_or("");
  unsigned char mac[32];
  unsigned len = 0;
  HMAC(EVP_sha256(), raw.data(), static_cast<int>(raw.size()), reinterpret_cast<const unsigned char*>(s.data()),
       s.size(), mac, &len);
  return b64(std::string(reinterpret_cast<const char*>(mac), len));
}

}  // namespace batchai::serve
