// containerSettings at `job create`: the image reference, its registry, credentials and shmSize
// checked before anything runs (docs/behaviour.md, "Containers"), and the forms the job run
// needs (the fully qualified image, shmSize in bytes). Pure functions; the run is container_plan.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "batchai/common/json_util.hpp"

namespace batchai::runtime {

inline constexpr std::size_t kMaxImageReferenceLength = 255;
inline constexpr std::int64_t kMinShmBytes = std::int64_t{1} << 20;  // 1 MiB
inline constexpr std::int64_t kMaxShmBytes = std::int64_t{1} << 40;  // 1 TiB

// True when `reference` is a Docker image reference (docker/distribution's grammar:
// [domain/]path[:tag][@digest], lower-case path components, at most 255 characters).
bool valid_image_reference(std::string_view reference);

// shmSize ("64m", "1g", "1073741824", "512MB") in bytes; InvalidArgument for unknown units or a
// size outside [1 MiB, 1 TiB].
std::int64_t parse_shm_size(std::string_view text);

// The registry host of `server_url` ("https://myreg.azurecr.io/" -> "myreg.azurecr.io");
// InvalidArgument when it is not a host[:port] with an optional http(s):// scheme.
std::string registry_host(std::string_view server_url);

// The reference Podman pulls: with a registry host in the image as given; else serverUrl's host
// or docker.io (Docker Hub: "ubuntu" -> "docker.io/library/ubuntu").
std::string qualified_image(const std::string& image, const std::string& server_url);
// The registry of a qualified image ("docker.io/library/ubuntu" -> "docker.io").
std::string image_registry(const std::string& qualified);

// Checks a job file's containerSettings (wire form); InvalidArgument naming the field otherwise.
void validate_container_settings(const Json& container_settings);

}  // namespace batchai::runtime
