// Internals shared by the confined-path sources (private to the common module): the lookup
// beneath a root descriptor and the path splitting both sides use.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace batchai::confined_internal {

// Non-empty components of a '/'-separated path.
std::vector<std::string> split(const std::string& path);
// The first `count` parts joined with '/'; "." when there are none.
std::string join(const std::vector<std::string>& parts, std::size_t count);
// openat(2) of `normal` beneath the folder `root` without leaving it (EXDEV when a symlink or
// '..' would): openat2(RESOLVE_BENEATH) where the kernel has it, else the O_NOFOLLOW walk.
int open_beneath(int root, const std::string& normal, int flags, mode_t mode = 0);

}  // namespace batchai::confined_internal
