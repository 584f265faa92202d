// How the ranks of a host write the slots of the shared segment that the other ranks read.
// Through the cache (memcpy) a reader takes the lines straight from the writer's cache: fastest
// when the two cores share a last-level cache, but when they do not (another CCD or socket; a VM
// whose virtual CPUs the host moves between them) every line is a cross-die snoop of a dirty line
// plus an invalidation the next time it is written, and the same sums run 3-5x slower than
// Open MPI's. Streaming stores write around the cache: readers load from memory at full speed,
// wherever the cores are, but lose the shared-cache hand-off. Neither wins everywhere, and where a
// VM's cores sit changes while it runs, so local rank 0 measures both and picks per size class.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace batchai::train::detail {

enum class SlotWrites : std::uint32_t { kCached = 0, kStreaming = 1, kAuto = 2 };

// dst[0..n) = src[0..n): streaming stores for 16-byte aligned `dst` (the tail and an unaligned
// start through the cache). Call streaming_fence() before publishing what was written.
void stream_floats(float* dst, const float* src, std::size_t n);
void streaming_fence();

// Picks cached or streaming writes for each call of a size (log2 classes of bytes) from the
// calls' measured times: a few of each first, then the faster of the two, with one call of the
// other every kProbeEvery so that a change of placement is noticed. A way's time is the least of
// its last kWindow calls: a call held up by another process (noise only ever adds) does not
// switch, a change that lasts kWindow calls does, and one probe can switch back.
class SlotWriteChooser {
 public:
  static constexpr std::uint32_t kWarmUp = 3;       // calls of each way before choosing
  static constexpr std::uint32_t kProbeEvery = 32;  // then one call of the other way in this many
  static constexpr std::uint32_t kWindow = 4;       // calls whose least time is the way's time

  static constexpr std::size_t kClasses = 64;
  // The size class of a call of `bytes`: floor(log2(bytes)), 0 for none.
  static std::size_t class_of(std::size_t bytes);

  // The way to write for the next call of `bytes`.
  SlotWrites next(std::size_t bytes);
  // The call of `bytes` written `way` took `seconds`.
  void record(std::size_t bytes, SlotWrites way, double seconds);

 private:
  struct Way {
    std::array<double, kWindow> seconds_per_byte{};
    std::uint32_t samples = 0;
    double least() const;
  };
  struct SizeClass {
    std::array<Way, 2> ways{};  // by SlotWrites: cached, streaming
    std::uint32_t calls = 0;
  };
  std::array<SizeClass, kClasses> classes_{};
};

}  // namespace batchai::train::detail
