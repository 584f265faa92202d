// Part of every reconcile: provisioning file servers whose time has come succeed.
#pragma once
#include <cstdint>

namespace batchai::control_plane {

class Context;

void step_file_servers(const Context& cx, std::int64_t now_us);

}  // namespace batchai::control_plane
