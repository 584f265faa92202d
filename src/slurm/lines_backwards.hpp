// Reading a log from its end: Slurm's completion record (jobcomp/filetxt) only grows, for years,
// and the records batchai asks for are those of jobs that ended lately.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string_view>

namespace batchai::slurm {

// Calls `line` with each non-empty line of the file at `path` (without its '\n'), from the last to
// the first, until it returns false. Reads blocks of `block` bytes from the end, so finding the last
// records costs what they take, not the whole file; a line longer than `max_line` is passed over
// (never held whole). False when the file cannot be opened or read.
bool for_each_line_backwards(const std::filesystem::path& path, std::size_t max_line,
                             const std::function<bool(std::string_view)>& line, std::size_t block = 64 * 1024);

}  // namespace batchai::slurm
