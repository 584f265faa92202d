#include "arm/auth_routes.hpp"

#include <chrono>
#include <map>

#include "http/encoding.hpp"
#include "arm/token.hpp"

namespace batchai::serve {
namespace {

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// AAD's error shape (MSAL reads "error" and "error_description").
void aad_error(Call& call, int status, const std::string& error, const std::string& description) {
  call.json(status, {{"error", error}, {"error_description", description}, {"error_codes", Json::array()},
                     {"timestamp", ""}, {"trace_id", ""}, {"correlation_id", ""}});
}

// The token request's form; nullopt for a malformed one (a bad escape, a repeated key).
std::optional<std::map<std::string, std::string>> parse_form(const std::string& body) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find('&', start);
    if (end == std::string::npos) end = body.size();
    const std::string pair = body.substr(start, end - start);
    const std::size_t eq = pair.find('=');
    auto key = form_decode(pair.substr(0, eq));
    auto value = form_decode(eq == std::string::npos ? std::string() : pair.substr(eq + 1));
    if (!key || !value || out.count(*key)) return std::nullopt;
    out[*key] = *value;
    start = end + 1;
  }
  return out;
}

void token(Call& call, const Identity& identity) {
  auto form = parse_form(call.req.body);
  if (!form) return aad_error(call, 400, "invalid_request", "AADSTS900144: The request body is malformed.");
  auto field = [&](const char* key) {
    auto it = form->find(key);
    return it == form->end() ? std::string() : it->second;
  };
  if (field("grant_type") != "client_credentials")
    return aad_error(call, 400, "unsupported_grant_type",
                     "AADSTS70003: The app requested an unsupported grant type: only client_credentials is served.");
  if (!constant_time_equal(field("client_id"), identity.client_id) ||
      !constant_time_equal(field("client_secret"), identity.client_secret))
    return aad_error(call, 401, "invalid_client",
                     "AADSTS7000215: Invalid client id or secret provided: use the ones batchai serve printed.");
  // The audience az asks for is "<resource>/.default" (a double slash when it ends in '/').
  std::string audience = field("scope").empty() ? field("resource") : field("scope");
  if (auto space = audience.find(' '); space != std::string::npos) audience.resize(space);
  constexpr std::string_view kDefault = "/.default";
  if (audience.size() >= kDefault.size() && audience.compare(audience.size() - kDefault.size(), kDefault.size(), kDefault) == 0)
    audience.resize(audience.size() - kDefault.size());
  if (audience.size() > 256) audience.resize(256);
  call.json(200, {{"token_type", "Bearer"},
                  {"expires_in", kTokenLifetimeSeconds - 1},
                  {"ext_expires_in", kTokenLifetimeSeconds - 1},
                  {"access_token", issue_token(identity, audience, now_seconds())}});
}

Json openid_configuration(const std::string& base) {
  const std::string adfs = base + "/adfs";
  return {{"issuer", adfs},
          {"authorization_endpoint", adfs + "/oauth2/authorize"},
          {"token_endpoint", adfs + "/oauth2/token"},
          {"jwks_uri", adfs + "/discovery/keys"},
          {"response_types_supported", {"code", "id_token", "token"}},
          {"subject_types_supported", {"pairwise"}},
          {"id_token_signing_alg_values_supported", {"HS256"}},
          {"token_endpoint_auth_methods_supported", {"client_secret_post"}},
          {"scopes_supported", {"openid"}}};
}

}  // namespace

bool is_auth_route(const Call& call) {
  return call.is({"metadata", "endpoints"}) || call.is({"adfs", ".well-known", "openid-configuration"}) ||
         call.is({"adfs", "oauth2", "token"});
}

bool handle_auth_route(Call& call, const Identity& identity) {
  const bool get = call.method() == "GET" || call.method() == "HEAD";
  if (call.is({"metadata", "endpoints"})) {
    if (!get) return call.error(405, "MethodNotAllowed", "Only GET is served here."), true;
    call.json(200, {{"galleryEndpoint", call.base + "/gallery/"},
                    {"graphEndpoint", call.base + "/graph/"},
                    {"portalEndpoint", call.base + "/portal/"},
                    {"authentication", {{"loginEndpoint", call.base + "/adfs"}, {"audiences", {call.base + "/"}}}},
                    {"batch", call.base + "/batch/"},
                    {"name", "batchai-local"}});
    return true;
  }
  if (call.is({"adfs", ".well-known", "openid-configuration"})) {
    if (!get) return call.error(405, "MethodNotAllowed", "Only GET is served here."), true;
    call.json(200, openid_configuration(call.base));
    return true;
  }
  if (call.is({"adfs", "oauth2", "token"})) {
    if (call.method() != "POST") return aad_error(call, 405, "invalid_request", "Only POST is served here."), true;
    token(call, identity);
    return true;
  }
  return false;
}

bool check_bearer(Call& call, const Identity& identity) {
  const std::string header = call.req.get_header_value("Authorization");
  if (header.empty()) {
    call.error(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.");
    return false;
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || !std::equal(kBearer.begin(), kBearer.end(), header.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
      })) {
    call.error(401, "AuthenticationFailed",
               "Authentication failed. The 'Authorization' header is provided in an invalid format.");
    return false;
  }
  switch (check_token(identity, std::string_view(header).substr(kBearer.size()), now_seconds(), arm_audiences(call.base))) {
    case TokenCheck::kValid:
      return true;
    case TokenCheck::kExpired:
      call.error(401, "ExpiredAuthenticationToken", "The access token has expired: get a new one (az login).");
      return false;
    default:
      call.error(401, "InvalidAuthenticationToken", "The access token is invalid.");
      return false;
  }
}

}  // namespace batchai::serve
