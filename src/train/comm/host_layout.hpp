// Which ranks share a host: those on one kernel (boot id) with the same network, IPC and PID
// namespaces and /dev/shm, so that shared memory and process ids mean the same to all of them
// (a job's containers on one machine share these: docs/adr/0005-job-containers.md), where MPI's
// MPI_COMM_TYPE_SHARED would part ranks under different Open MPI daemons. MPI_COMM_TYPE_SHARED
// where a rank cannot tell; for tests, BATCHAI_TEST_RANKS_PER_HOST=n makes every n consecutive
// ranks one host.
#pragma once
#include "mpi_c.hpp"

#include <string>
#include <vector>

namespace batchai::train::detail {

class HostLayout {
 public:
  // Collective over `comm` (which it duplicates; `comm` may be freed afterwards).
  explicit HostLayout(MPI_Comm comm);
  ~HostLayout();
  HostLayout(const HostLayout&) = delete;
  HostLayout& operator=(const HostLayout&) = delete;

  MPI_Comm local() const { return local_; }      // the ranks of this host, by rank
  MPI_Comm leaders() const { return leaders_; }  // local rank 0 of every host; MPI_COMM_NULL elsewhere
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int hosts() const { return hosts_; }
  int most_per_host() const { return most_per_host_; }  // the largest local_size() of any host
  const std::vector<int>& local_world_ranks() const { return local_world_ranks_; }  // by local rank

 private:
  MPI_Comm local_ = MPI_COMM_NULL;
  MPI_Comm leaders_ = MPI_COMM_NULL;
  int local_rank_ = 0;
  int local_size_ = 1;
  int hosts_ = 1;
  int most_per_host_ = 1;
  std::vector<int> local_world_ranks_;
};

// The most ranks any host holds; collective over MPI_COMM_WORLD. 1 when MPI is not initialised.
int most_ranks_per_host();
// The ranks on this rank's host; collective over MPI_COMM_WORLD. 1 when MPI is not initialised.
int ranks_on_this_host();

// This process's host as above: "<boot id>|net:<inode>|ipc:<inode>|pid:<inode>|shm:<dev>:<inode>";
// empty when a part cannot be read.
std::string machine_key();

}  // namespace batchai::train::detail
