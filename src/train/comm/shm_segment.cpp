// Creating, sharing and unlinking the host's segment (see shm_segment.hpp).
#include "shm_segment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "mpi_error.hpp"

namespace batchai::train::detail {
namespace {

constexpr int kNameBytes = 64;
constexpr char kNamePrefix[] = "batchai-allreduce-";

std::string random_name() {
  std::random_device rd;  // the kernel's randomness: the name cannot be guessed by other users
  char name[kNameBytes];
  std::snprintf(name, sizeof name, "/%s%d-%08x%08x%08x", kNamePrefix, static_cast<int>(::getpid()), rd(), rd(),
                rd());
  return name;
}

std::string failed(const char* call, const std::string& name) {
  return std::string(call) + "(" + name + "): " + std::strerror(errno);
}

// Maps `bytes` of `fd`; nullptr on failure (errno set).
void* map(int fd, std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// The creator's pid in a segment's name ("batchai-allreduce-<pid>-<24 hex digits>"); 0 when the
// name is not one of ours.
pid_t creator_of(const std::string& name) {
  const std::size_t prefix = sizeof kNamePrefix - 1;
  if (name.compare(0, prefix, kNamePrefix) != 0) return 0;
  const std::size_t dash = name.find('-', prefix);
  if (dash == std::string::npos || dash == prefix || dash - prefix > 9 || name.size() - dash - 1 != 24) return 0;
  if (name.find_first_not_of("0123456789", prefix) != dash) return 0;
  if (name.find_first_not_of("0123456789abcdef", dash + 1) != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(name.substr(prefix, dash - prefix)));
}

}  // namespace

int remove_orphan_segments(const char* dir) {
  DIR* d = ::opendir(dir);
  if (d == nullptr) return 0;
  int removed = 0;
  const uid_t me = ::geteuid();
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const pid_t creator = creator_of(name);
    if (creator <= 1) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me)
      continue;
    // Alive (or not ours to signal: another user's process with that pid): left alone.
    if (::kill(creator, 0) == 0 || errno != ESRCH) continue;
    if (::shm_unlink(("/" + name).c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

std::unique_ptr<ShmSegment> ShmSegment::open(MPI_Comm local, std::size_t bytes,
                                             const std::function<void(void*)>& format, std::string* why) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(local, &rank), "MPI_Comm_rank");
  char name[kNameBytes] = {};
  void* data = nullptr;
  if (rank == 0) {
    remove_orphan_segments();  // left by a rank 0 killed during its set-up
    const std::string n = random_name();
    std::snprintf(name, sizeof name, "%s", n.c_str());
    const int fd = ::shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
      *why = failed("shm_open", n);
    } else {
      // Reserves the pages now: a full /dev/shm fails here, not with SIGBUS mid-collective.
      const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
      if (rc != 0) {
        errno = rc;
        *why = failed("posix_fallocate", n) + " (is /dev/shm large enough?)";
      } else if ((data = map(fd, bytes)) == nullptr) {
        *why = failed("mmap", n);
      }
      ::close(fd);
      if (data == nullptr) ::shm_unlink(name);
    }
    if (data != nullptr) format(data);
    else name[0] = '\0';
  }
  check_mpi(MPI_Bcast(name, kNameBytes, MPI_CHAR, 0, local), "MPI_Bcast (segment name)");
  if (name[0] == '\0') return nullptr;  // local rank 0 could not create it
  if (rank != 0) {
    const int fd = ::shm_open(name, O_RDWR, 0);
    struct stat st {};
    if (fd < 0) {
      *why = failed("shm_open", name);
    } else if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes) {
      *why = std::string("segment ") + name + " has an unexpected size";
    } else if ((data = map(fd, bytes)) == nullptr) {
      *why = failed("mmap", name);
    }
    if (fd >= 0) ::close(fd);
  }
  // Also the barrier after which nobody opens the name again.
  int mapped = data != nullptr ? 1 : 0, all_mapped = 0;
  check_mpi(MPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, local), "MPI_Allreduce (segment mapped)");
  if (rank == 0) ::shm_unlink(name);
  if (!all_mapped) {
    if (data != nullptr) ::munmap(data, bytes);
    if (why->empty()) *why = "another rank of this host could not map the segment";
    return nullptr;
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(data, bytes));
}

ShmSegment::~ShmSegment() { ::munmap(data_, size_); }

}  // namespace batchai::train::detail
