// Which ranks share a host: MPI_COMM_TYPE_SHARED groups them, or, for tests only,
// BATCHAI_TEST_RANKS_PER_HOST=n pretends every n consecutive ranks are one host.
#pragma once
#include "mpi_c.hpp"

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

}  // namespace batchai::train::detail
