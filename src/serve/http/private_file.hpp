// Files only their owner may read (keys, secrets): written whole to a 0600 temporary file in
// the same folder, then renamed over the target, so no reader sees a part or wider modes.
#pragma once
#include <filesystem>
#include <string>

namespace batchai::serve {

// Creates `dir` (and parents) with mode 0700 for the last component.
void make_private_dir(const std::filesystem::path& dir);
void write_private_file(const std::filesystem::path& path, const std::string& content);

}  // namespace batchai::serve
