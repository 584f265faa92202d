// What this build of batchai is: the project() version of CMakeLists.txt and the commit it was
// configured from (git describe; "unknown" outside a git checkout), written at configure time.
#pragma once

namespace batchai::cli {

const char* batchai_version();
const char* batchai_commit();

}  // namespace batchai::cli
