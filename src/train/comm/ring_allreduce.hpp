// Ring allreduce (reduce-scatter then allgather) over MPI point-to-point, in place on one
// float buffer. Each ring step is cut into chunks, and a chunk moves on to the next step as
// soon as it has arrived, so reductions and transfers of different chunks and steps overlap.
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
  // One ring step: the element ranges it sends right and receives from the left; received
  // values are added (reduce-scatter) or stored (allgather).
  struct Step {
    bool reduce = false;
    std::size_t send_begin = 0, send_len = 0, recv_begin = 0, recv_len = 0;
  };
  Step plan_step(std::size_t count, int k) const;
  std::size_t seg_begin(std::size_t count, int seg) const;
  std::size_t chunk_of(std::size_t len) const;  // floats per message for a segment of `len`
  std::size_t chunks(std::size_t len) const;    // messages for a segment of `len`
  int left() const { return (rank_ + size_ - 1) % size_; }
  int right() const { return (rank_ + 1) % size_; }
  void wait_sends(int k);  // completes the sends of step k (none for k < 0)
  // MPI_Wait under the stall watchdog; `peer` and `what` shape the error messages. For a
  // receive, `expected` floats must arrive (else the ranks disagree on the length); -1 = send.
  void wait(MPI_Request& request, int peer, const char* what, int expected);

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::size_t chunk_bytes_;
  StallWatchdog watchdog_;
  std::vector<float> scratch_;  // received chunks waiting to be added (two steps' worth)
  std::vector<Step> plan_;                                               // per step
  std::vector<std::vector<MPI_Request>> recv_requests_, send_requests_;  // per step
};

}  // namespace batchai::train::detail
