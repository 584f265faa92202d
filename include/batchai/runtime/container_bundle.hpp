// batchai inside any image (docs/adr/0005-job-containers.md, decision 3): the running executable,
// its plugins and every shared library they need (as ldd resolves them here), with the host's
// dynamic loader, bound read-only under /.batchai/lib, and at batchai's own path a script that
// runs it through that loader. The library list is cached per executable (path, size, mtime,
// inode of each file, the loader cache, the host), so a job pays ldd only after an upgrade.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "batchai/common/process.hpp"
#include "batchai/runtime/container_plan.hpp"

namespace batchai::runtime {

// {name the loader knows it by, file} of every library `files` need, from `cache` when its key
// still matches them, else from ldd (and `cache` rewritten, atomically, mode 0600). An entry read
// from the cache that is not a plain name and an absolute path to an existing file is refused,
// and the list computed again.
std::vector<std::pair<std::string, std::filesystem::path>> needed_libraries(
    ProcessLauncher& launcher, const std::vector<std::filesystem::path>& files, const std::filesystem::path& cache);

// The binds that put the running batchai in a container; `script_dir` receives the script run at
// batchai's own path, `cache` the library list (needed_libraries).
std::vector<Bind> batchai_bundle(ProcessLauncher& launcher, const std::filesystem::path& script_dir,
                                 const std::filesystem::path& cache);

}  // namespace batchai::runtime
