// One POSIX shared-memory segment for the ranks of a host: local rank 0 creates it under an
// unguessable name (O_EXCL, mode 0600), every rank maps it, and the name is unlinked as soon as
// all have mapped it, so nothing is left in /dev/shm even when a rank is killed later. A local
// rank 0 killed before that (during the set-up) leaves its segment: the name carries its pid, and
// the next local rank 0 of this user removes the segments whose creator is dead.
#pragma once
#include "mpi_c.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace batchai::train::detail {

// Removes this user's segments in `dir` (/dev/shm) whose creator's pid is gone; returns how many.
int remove_orphan_segments(const char* dir = "/dev/shm");

class ShmSegment {
 public:
  // Collective over `local`. `format` runs on local rank 0 before any other rank maps the
  // segment. Returns nullptr on every rank of `local` when any of them could not create or map
  // it (then *why says what failed, on the rank that failed).
  static std::unique_ptr<ShmSegment> open(MPI_Comm local, std::size_t bytes,
                                          const std::function<void(void*)>& format, std::string* why);
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  ShmSegment(void* data, std::size_t size) : data_(data), size_(size) {}
  void* data_;
  std::size_t size_;
};

}  // namespace batchai::train::detail
