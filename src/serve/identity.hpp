// The home's server identity (batchai/serve/server.hpp Identity): made once with random values,
// stored 0600 in <dir>/credentials.json, read back and checked on every start.
#pragma once
#include <filesystem>

#include "batchai/serve/server.hpp"

namespace batchai::serve {

// Creates <dir> (0700) and the file when missing; a file that is not ours (bad JSON, fields of
// the wrong shape) is refused with InvalidArgument rather than silently replaced.
Identity load_or_create_identity(const std::filesystem::path& dir);

}  // namespace batchai::serve
