// Ring allreduce (reduce-scatter then allgather) over MPI point-to-point, in place on one
// float buffer. Each ring step is cut into chunks so the reduction of one chunk overlaps
// with the transfer of the next.
#pragma once
#include "mpi_c.hpp"

#include <cstddef>
#include <vector>

#include "stall_watchdog.hpp"

namespace batchai::train::detail {

class RingAllreduce {
 public:
  // `chunk_bytes`: size of one pipelined message; 0 = one message per ring step.
  // `timeout_s` > 0: a neighbour silent for that long is reported on stderr and this rank
  // exits (see StallWatchdog) instead of waiting forever; 0 = wait as long as MPI does.
  RingAllreduce(MPI_Comm comm, std::size_t chunk_bytes, double timeout_s = 0);
  // data[i] = sum over ranks of data[i]; any count, also 0 or < ranks.
  void sum(float* data, std::size_t count);
  std::size_t chunk_bytes() const { return chunk_bytes_; }

 private:
  // Moves segment `send_seg` to the right neighbour and receives `recv_seg` from the left;
  // received values are added (reduce) or stored (gather).
  void step(float* data, std::size_t count, int send_seg, int recv_seg, bool reduce);
  std::size_t seg_begin(std::size_t count, int seg) const;
  // MPI_Wait under the stall watchdog; `peer` and `what` shape the error messages. For a
  // receive, `expected` floats must arrive (else the ranks disagree on the length); -1 = send.
  void wait(MPI_Request& request, int peer, const char* what, int expected);

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::size_t chunk_bytes_;
  StallWatchdog watchdog_;
  std::vector<float> scratch_;  // received chunks waiting to be added
  std::vector<MPI_Request> requests_;
};

}  // namespace batchai::train::detail
