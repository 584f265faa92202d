// Ring allreduce: P-1 reduce-scatter steps then P-1 allgather steps. After the first phase
// rank r holds the full sum of segment (r+1) mod P; the second phase circulates those sums.
#include "ring_allreduce.hpp"

#include <algorithm>
#include <string>

#include "batchai/common/errors.hpp"
#include "mpi_error.hpp"

namespace batchai::train::detail {
namespace {

constexpr int kRingTag = 0x5249;  // tag for ring traffic on the communicator's own comm
// Most messages a step posts at once; chunks grow beyond chunk_bytes to respect it.
constexpr std::size_t kMaxChunksPerStep = 64;
// Elements per MPI message must fit an int.
constexpr std::size_t kMaxMessageFloats = std::size_t{1} << 28;

int mod(int a, int n) { return ((a % n) + n) % n; }

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

// dst += src, memory-bound. Fixed 16-wide blocks let -O2 (GCC's very-cheap vector cost
// model, which refuses loops needing an epilogue) emit SIMD adds; the tail is scalar.
void add_into(float* __restrict dst, const float* __restrict src, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t k = 0; k < 16; ++k) dst[i + k] += src[i + k];
  }
  for (; i < n; ++i) dst[i] += src[i];
}

}  // namespace

RingAllreduce::RingAllreduce(MPI_Comm comm, std::size_t chunk_bytes, double timeout_s)
    : comm_(comm),
      rank_(comm_rank(comm)),
      chunk_bytes_(chunk_bytes),
      watchdog_(timeout_s, rank_) {
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

std::size_t RingAllreduce::seg_begin(std::size_t count, int seg) const {
  // Balanced split: segment lengths differ by at most one element.
  const auto p = static_cast<std::size_t>(size_);
  const auto s = static_cast<std::size_t>(seg);
  return (count / p) * s + std::min(s, count % p);
}

void RingAllreduce::sum(float* data, std::size_t count) {
  if (size_ == 1 || count == 0) return;
  const std::size_t max_seg = count / static_cast<std::size_t>(size_) + 1;
  if (scratch_.size() < max_seg) scratch_.resize(max_seg);
  for (int s = 0; s < size_ - 1; ++s) {
    step(data, count, mod(rank_ - s, size_), mod(rank_ - s - 1, size_), true);
  }
  for (int s = 0; s < size_ - 1; ++s) {
    step(data, count, mod(rank_ + 1 - s, size_), mod(rank_ - s, size_), false);
  }
}

void RingAllreduce::step(float* data, std::size_t count, int send_seg, int recv_seg,
                         bool reduce) {
  const int right = mod(rank_ + 1, size_);
  const int left = mod(rank_ - 1, size_);
  const std::size_t send_begin = seg_begin(count, send_seg);
  const std::size_t send_len = seg_begin(count, send_seg + 1) - send_begin;
  const std::size_t recv_begin = seg_begin(count, recv_seg);
  const std::size_t recv_len = seg_begin(count, recv_seg + 1) - recv_begin;

  // Sender and receiver derive the same chunking from the segment length alone.
  auto chunk_of = [this](std::size_t len) {
    std::size_t chunk = chunk_bytes_ == 0 ? len : std::max<std::size_t>(chunk_bytes_ / 4, 1);
    chunk = std::max(chunk, (len + kMaxChunksPerStep - 1) / kMaxChunksPerStep);
    return std::clamp<std::size_t>(chunk, 1, kMaxMessageFloats);
  };
  const std::size_t send_chunk = chunk_of(send_len);
  const std::size_t recv_chunk = chunk_of(recv_len);
  const std::size_t n_recv = recv_len == 0 ? 0 : (recv_len + recv_chunk - 1) / recv_chunk;
  const std::size_t n_send = send_len == 0 ? 0 : (send_len + send_chunk - 1) / send_chunk;

  requests_.assign(n_recv + n_send, MPI_REQUEST_NULL);
  float* recv_base = reduce ? scratch_.data() : data + recv_begin;
  for (std::size_t c = 0; c < n_recv; ++c) {
    const std::size_t off = c * recv_chunk;
    const int len = static_cast<int>(std::min(recv_chunk, recv_len - off));
    check_mpi(MPI_Irecv(recv_base + off, len, MPI_FLOAT, left, kRingTag, comm_, &requests_[c]),
              "MPI_Irecv (ring allreduce)");
  }
  for (std::size_t c = 0; c < n_send; ++c) {
    const std::size_t off = c * send_chunk;
    const int len = static_cast<int>(std::min(send_chunk, send_len - off));
    check_mpi(MPI_Isend(data + send_begin + off, len, MPI_FLOAT, right, kRingTag, comm_,
                        &requests_[n_recv + c]),
              "MPI_Isend (ring allreduce)");
  }
  // Reduce each chunk as soon as it lands while later chunks are still in flight.
  for (std::size_t c = 0; c < n_recv; ++c) {
    const std::size_t off = c * recv_chunk;
    const std::size_t len = std::min(recv_chunk, recv_len - off);
    wait(requests_[c], left, "for data from", static_cast<int>(len));
    if (!reduce) continue;
    add_into(data + recv_begin + off, scratch_.data() + off, len);
  }
  for (std::size_t c = 0; c < n_send; ++c) wait(requests_[n_recv + c], right, "to deliver data to", -1);
}

void RingAllreduce::wait(MPI_Request& request, int peer, const char* what, int expected) {
  MPI_Status status;
  watchdog_.begin(peer, what);
  const int rc = MPI_Wait(&request, &status);
  watchdog_.end();
  int error_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
  int got = expected;
  if (rc == MPI_SUCCESS && expected >= 0) MPI_Get_count(&status, MPI_FLOAT, &got);
  if (error_class == MPI_ERR_TRUNCATE || got != expected) {
    throw Error("ring allreduce: rank " + std::to_string(rank_) + " received " +
                (error_class == MPI_ERR_TRUNCATE ? std::string("more") : std::to_string(got)) +
                " floats from rank " + std::to_string(peer) + " where it expected " +
                std::to_string(expected) + ": the ranks are reducing buffers of different "
                "lengths (different models or options?); call check_agreement on the length "
                "first");
  }
  check_mpi(rc, "MPI_Wait (ring allreduce)");
}

}  // namespace batchai::train::detail
