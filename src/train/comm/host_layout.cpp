// Splitting the ranks by host (see host_layout.hpp).
#include "host_layout.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "comm_env.hpp"
#include "mpi_error.hpp"

namespace batchai::train::detail {
namespace {

constexpr std::size_t kKeyBytes = 192;  // a boot id (36) and four numbers fit well within

// The first rank whose machine key equals this rank's: the ranks of one host get one colour.
// -1 on every rank when some rank has no key (each one saw every key: the same answer).
int colour_by_machine(MPI_Comm comm) {
  std::string key = machine_key();
  if (key.size() >= kKeyBytes) key.clear();
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<char> mine(kKeyBytes, '\0'), all(kKeyBytes * static_cast<std::size_t>(size), '\0');
  std::memcpy(mine.data(), key.data(), key.size());
  check_mpi(MPI_Allgather(mine.data(), static_cast<int>(kKeyBytes), MPI_CHAR, all.data(), static_cast<int>(kKeyBytes),
                          MPI_CHAR, comm),
            "MPI_Allgather (host keys)");
  int colour = -1;
  for (int r = 0; r < size; ++r) {
    const char* other = all.data() + static_cast<std::size_t>(r) * kKeyBytes;
    if (other[0] == '\0') return -1;
    if (colour < 0 && std::memcmp(other, mine.data(), kKeyBytes) == 0) colour = r;
  }
  return colour;
}

std::string namespace_inode(const char* kind) {
  struct stat st {};
  const std::string path = std::string("/proc/self/ns/") + kind;
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::string(kind) + ":" + std::to_string(st.st_ino);
}

}  // namespace

std::string machine_key() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat shm {};
  if (boot.empty() || ::stat("/dev/shm", &shm) != 0) return "";
  std::string key = boot;
  for (const char* kind : {"net", "ipc", "pid"}) {
    const std::string part = namespace_inode(kind);
    if (part.empty()) return "";
    key += "|" + part;
  }
  return key + "|shm:" + std::to_string(shm.st_dev) + ":" + std::to_string(shm.st_ino);
}

HostLayout::HostLayout(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (const int per_host = test_ranks_per_host(); per_host > 0) {
    check_mpi(MPI_Comm_split(comm, rank / per_host, rank, &local_), "MPI_Comm_split (test hosts)");
  } else if (const int colour = colour_by_machine(comm); colour >= 0) {
    check_mpi(MPI_Comm_split(comm, colour, rank, &local_), "MPI_Comm_split (ranks by host)");
  } else {
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local_),
              "MPI_Comm_split_type (ranks by host)");
  }
  check_mpi(MPI_Comm_set_errhandler(local_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(local_, &local_rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(local_, &local_size_), "MPI_Comm_size");
  check_mpi(MPI_Comm_split(comm, local_rank_ == 0 ? 0 : MPI_UNDEFINED, rank, &leaders_), "MPI_Comm_split (leaders)");
  if (leaders_ != MPI_COMM_NULL) check_mpi(MPI_Comm_set_errhandler(leaders_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  const int leader = local_rank_ == 0 ? 1 : 0;
  check_mpi(MPI_Allreduce(&leader, &hosts_, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce (host count)");
  check_mpi(MPI_Allreduce(&local_size_, &most_per_host_, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce (ranks per host)");
  local_world_ranks_.resize(static_cast<std::size_t>(local_size_));
  int world_rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  check_mpi(MPI_Allgather(&world_rank, 1, MPI_INT, local_world_ranks_.data(), 1, MPI_INT, local_),
            "MPI_Allgather (host ranks)");
}

HostLayout::~HostLayout() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (leaders_ != MPI_COMM_NULL) MPI_Comm_free(&leaders_);
  if (local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
}

int most_ranks_per_host() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 1;
  return HostLayout(MPI_COMM_WORLD).most_per_host();
}

int ranks_on_this_host() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 1;
  return HostLayout(MPI_COMM_WORLD).local_size();
}

}  // namespace batchai::train::detail
