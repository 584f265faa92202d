// containerSettings checks and forms (container_settings.hpp).
#include "batchai/runtime/container_settings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "batchai/common/errors.hpp"

namespace batchai::runtime {
namespace {

// docker/distribution reference grammar, written so that no part can match the same text two
// ways (no empty separators): matching stays linear on hostile input.
const std::string kDomainComponent = "(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)";
const std::string kDomain = kDomainComponent + "(?:\\." + kDomainComponent + ")*(?::[0-9]{1,5})?";
const std::string kPathComponent = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const std::string kName = "(?:" + kDomain + "/)?" + kPathComponent + "(?:/" + kPathComponent + ")*";
const std::string kTag = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
const std::string kDigest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

bool is_string(const Json& obj, const char* key) { return obj.contains(key) && obj[key].is_string(); }
bool given(const Json& obj, const char* key) { return obj.contains(key) && !obj[key].is_null(); }

// A registry host: the first path component when it looks like one (a dot, a port or "localhost").
bool names_registry(const std::string& first) {
  return first.find_first_of(".:") != std::string::npos || first == "localhost" ||
         std::any_of(first.begin(), first.end(), [](unsigned char c) { return std::isupper(c); });
}

}  // namespace

bool valid_image_reference(std::string_view reference) {
  if (reference.empty() || reference.size() > kMaxImageReferenceLength) return false;
  static const std::regex kReference("(" + kName + ")(?::" + kTag + ")?(?:@" + kDigest + ")?");
  return std::regex_match(reference.begin(), reference.end(), kReference);
}

std::int64_t parse_shm_size(std::string_view text) {
  static const std::regex kSize("([0-9]{1,16})(?:\\.([0-9]{1,9}))? ?([bBkKmMgGtT]?)(?:[iI]?[bB])?");
  std::match_results<std::string_view::const_iterator> m;
  if (text.size() > 40 || !std::regex_match(text.begin(), text.end(), m, kSize))
    throw InvalidArgument("containerSettings.shmSize '" + std::string(text.substr(0, 40)) +
                          "' is not a size: give a number with an optional unit b, k, m, g or t (e.g. \"64m\", \"2g\").");
  const std::string unit = m[3].str();
  const char u = unit.empty() ? 'b' : static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0])));
  const int shift = u == 'k' ? 10 : u == 'm' ? 20 : u == 'g' ? 30 : u == 't' ? 40 : 0;
  const long double bytes = std::stold(m[1].str() + (m[2].matched ? "." + m[2].str() : "")) * std::ldexp(1.0L, shift);
  if (bytes < kMinShmBytes || bytes > kMaxShmBytes)
    throw InvalidArgument("containerSettings.shmSize '" + std::string(text) +
                          "' is out of bounds: it must be between 1m and 1t (the container's /dev/shm).");
  return static_cast<std::int64_t>(bytes);
}

std::string registry_host(std::string_view server_url) {
  std::string s(server_url);
  for (const char* scheme : {"https://", "http://"}) {
    if (s.rfind(scheme, 0) == 0) s = s.substr(std::string_view(scheme).size());
  }
  while (!s.empty() && s.back() == '/') s.pop_back();
  static const std::regex kHost(kDomain);
  if (s.empty() || s.size() > kMaxImageReferenceLength || !std::regex_match(s, kHost))
    throw InvalidArgument("containerSettings.imageSourceRegistry.serverUrl '" +
                          std::string(server_url.substr(0, kMaxImageReferenceLength)) +
                          "' is not a registry address: give a host name with an optional port, e.g. "
                          "\"myregistry.azurecr.io\".");
  return s;
}

std::string qualified_image(const std::string& image, const std::string& server_url) {
  const auto slash = image.find('/');
  if (slash != std::string::npos && names_registry(image.substr(0, slash))) return image;
  if (!server_url.empty()) return registry_host(server_url) + "/" + image;
  return "docker.io/" + (slash == std::string::npos ? "library/" + image : image);
}

std::string image_registry(const std::string& qualified) { return qualified.substr(0, qualified.find('/')); }

void validate_container_settings(const Json& c) {
  if (c.is_null()) return;
  if (!c.is_object()) throw InvalidArgument("containerSettings must be an object.");
  if (given(c, "shmSize")) {
    if (!c["shmSize"].is_string()) throw InvalidArgument("containerSettings.shmSize must be a text such as \"64m\".");
    parse_shm_size(c["shmSize"].get<std::string>());
  }
  const Json registry = c.value("imageSourceRegistry", Json());
  if (!registry.is_object() || !is_string(registry, "image") || registry["image"].get<std::string>().empty()) {
    const bool credentials = registry.is_object() && given(registry, "credentials");
    throw InvalidArgument(std::string("containerSettings.imageSourceRegistry.image is missing") +
                          (credentials ? " (credentials are given, but for no image)" : "") +
                          ": name the Docker image the job runs in, e.g. \"ubuntu:22.04\".");
  }
  const std::string image = registry["image"].get<std::string>();
  if (!valid_image_reference(image)) {
    std::string shown;
    for (char ch : image.substr(0, 80)) shown += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
    throw InvalidArgument("containerSettings.imageSourceRegistry.image '" + shown +
                          "' is not a Docker image reference: use [registry/]name[:tag][@digest] with lower-case "
                          "names, no spaces or control characters, no leading '-', at most 255 characters.");
  }
  if (given(registry, "serverUrl")) {
    if (!registry["serverUrl"].is_string()) throw InvalidArgument("containerSettings.imageSourceRegistry.serverUrl must be a text.");
    registry_host(registry["serverUrl"].get<std::string>());
  }
  if (given(registry, "credentials")) {
    const Json& cr = registry["credentials"];
    if (!cr.is_object() || !is_string(cr, "username") || cr["username"].get<std::string>().empty())
      throw InvalidArgument("containerSettings.imageSourceRegistry.credentials.username is missing.");
    if (given(cr, "passwordSecretReference"))
      throw InvalidArgument("containerSettings.imageSourceRegistry.credentials.passwordSecretReference names a Key "
                            "Vault secret, which this installation cannot read: give the password instead.");
    if (!is_string(cr, "password"))
      throw InvalidArgument("containerSettings.imageSourceRegistry.credentials.password is missing.");
  }
}

}  // namespace batchai::runtime
