// The ranks of one host sum float buffers through one shared segment, with no MPI involved:
// the buffer goes through in chunks; for each chunk every rank copies its data into its own slot,
// reduces its slice of the chunk (all ranks' values, added in local-rank order) and writes the sum
// into its slot, then copies the other ranks' summed slices out. Two chunks' slots alternate, so
// a chunk can be written while slower ranks still read the previous one. Every element is summed
// by one rank in a fixed order, so all ranks receive the same bits, run after run, whichever way
// the slots are written (shm_slot_writes.hpp).
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "shm_peers.hpp"
#include "shm_slot_writes.hpp"

namespace batchai::train::detail {

class ShmReducer {
 public:
  // Bytes of segment that `ranks` ranks need for chunks of `chunk_floats` per rank.
  static std::size_t segment_bytes(int ranks, std::size_t chunk_floats);
  // Lays out a zeroed segment of segment_bytes() for the ranks; done once, by one process,
  // before any rank attaches.
  static void format(void* segment, int ranks, std::size_t chunk_floats);

  // Attaches local rank `rank` to a formatted segment and registers this process for the others'
  // liveness checks. `world_ranks` (optional, `ranks` entries, kept) names ranks in messages.
  // `writes`: how slots are written; kAuto lets local rank 0 choose and publish it per call.
  ShmReducer(void* segment, int rank, int ranks, std::size_t chunk_floats, double timeout_s,
             std::vector<int> world_ranks = {}, SlotWrites writes = SlotWrites::kAuto);
  ShmReducer(const ShmReducer&) = delete;  // the waiter points into world_ranks_
  ShmReducer& operator=(const ShmReducer&) = delete;

  // data[i] = sum over the host's ranks of data[i]. `gather` false: only local rank 0 receives
  // the sum (the others' data is left partly summed), for the hierarchical path. Every rank of
  // the host must call with the same count; different counts throw batchai::Error on every rank.
  void allreduce(float* data, std::size_t count, bool gather = true);
  // Local rank 0's data to every rank of the host.
  void broadcast(float* data, std::size_t count);

  int rank() const { return rank_; }
  // How this rank wrote its slots in its last allreduce (tests: every rank writes a call alike).
  SlotWrites last_way() const { return last_way_; }
  int ranks() const { return ranks_; }
  std::size_t chunk_floats() const { return chunk_; }

 private:
  // The way this call writes its slots: with kAuto, what local rank 0 published for its size.
  SlotWrites way_for(std::size_t count);
  // Local rank 0, at the end of an auto call: records its time and publishes the way of the
  // size's next call, before its last post (the other ranks wait for that post to read it).
  void choose_next(std::size_t count, SlotWrites way, std::chrono::steady_clock::time_point start);
  // Segment offset of slot `set` (0/1) of local rank `k`.
  float* slot(int k, unsigned set) const;
  void wait_all(std::uint32_t target) const;  // every other rank's phase reaches `target`
  void post(std::uint32_t phase) { PeerWaiter::post(lines_[rank_], phase); }
  std::size_t slice_begin(std::size_t len, int k) const;  // rank k's slice of a chunk of `len`

  char* base_;
  PeerLine* lines_;
  int rank_;
  int ranks_;
  std::size_t chunk_;
  std::vector<int> world_ranks_;
  PeerWaiter waiter_;
  SlotWrites writes_;
  std::atomic<std::uint32_t>* shared_ways_;  // in the segment: local rank 0's choice per size class
  SlotWriteChooser chooser_;                // local rank 0's, with kAuto
  SlotWrites last_way_ = SlotWrites::kCached;
  // Chunks done since attaching: the same on every rank, as all ranks run the same collectives.
  std::uint32_t seq_ = 0;
  std::vector<const float*> sources_;  // scratch: the ranks' pointers for one slice
};

}  // namespace batchai::train::detail
