// Whole-file reads and writes for tests: what a test expects a program to have written, and the
// inputs it writes for one. Both are byte-exact (binary mode).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace batchai::test {

// The whole file, or "" when it does not exist or cannot be read (tests poll for files to appear).
std::string read_file(const std::filesystem::path& path);

// Writes `text` as the whole file, making its parent folders; throws std::runtime_error when the
// write fails. Returns the path, so a test can pass it straight on.
std::filesystem::path write_file(const std::filesystem::path& path, std::string_view text);

}  // namespace batchai::test
