// How the shared-memory allreduce writes its slots: the streaming copy copies exactly, and the
// chooser settles on the faster way per size class, keeps probing the other, and follows a change.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "comm/shm_slot_writes.hpp"

namespace batchai::train::detail {
namespace {

TEST(StreamFloats, CopiesEveryLengthAtEveryAlignment) {
  std::vector<float> src(80), dst(80);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
  for (std::size_t d = 0; d < 4; ++d) {
    for (std::size_t s = 0; s < 4; ++s) {
      for (std::size_t n = 0; n <= 40; ++n) {
        std::fill(dst.begin(), dst.end(), -1.0f);
        stream_floats(dst.data() + d, src.data() + s, n);
        streaming_fence();
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const float want = i >= d && i < d + n ? src[s + i - d] : -1.0f;
          ASSERT_EQ(dst[i], want) << "dst+" << d << " src+" << s << " n " << n << " at " << i;
        }
      }
    }
  }
}

// Runs `calls` calls of `bytes` through the chooser, each taking the time `cost` gives for its way;
// returns how many were streamed.
template <typename Cost>
int run_calls(SlotWriteChooser& chooser, std::size_t bytes, int calls, Cost cost) {
  int streamed = 0;
  for (int i = 0; i < calls; ++i) {
    const SlotWrites way = chooser.next(bytes);
    streamed += way == SlotWrites::kStreaming ? 1 : 0;
    chooser.record(bytes, way, cost(way));
  }
  return streamed;
}

TEST(SlotWriteChooser, TriesBothThenKeepsTheFasterAndProbesTheOther) {
  SlotWriteChooser chooser;
  const int warm = 2 * static_cast<int>(SlotWriteChooser::kWarmUp);
  const auto streaming_slow = [](SlotWrites w) { return w == SlotWrites::kStreaming ? 2e-3 : 1e-3; };
  EXPECT_EQ(run_calls(chooser, 1 << 20, warm, streaming_slow), warm / 2);  // both ways while warming up
  const int calls = 10 * static_cast<int>(SlotWriteChooser::kProbeEvery);
  EXPECT_EQ(run_calls(chooser, 1 << 20, calls, streaming_slow), 10);  // cached, but for one probe in 32
}

TEST(SlotWriteChooser, FollowsAChangeOfWhichWayIsFaster) {
  SlotWriteChooser chooser;
  const auto cached_fast = [](SlotWrites w) { return w == SlotWrites::kCached ? 1e-3 : 3e-3; };
  const auto cached_slow = [](SlotWrites w) { return w == SlotWrites::kCached ? 5e-3 : 3e-3; };
  run_calls(chooser, 4 << 20, 100, cached_fast);
  run_calls(chooser, 4 << 20, 10, cached_slow);  // the cores moved apart: switched after kWindow calls
  const int calls = 5 * static_cast<int>(SlotWriteChooser::kProbeEvery);
  EXPECT_EQ(run_calls(chooser, 4 << 20, calls, cached_slow), calls - 5);  // streaming, probing cached
  // ...and back at the first probe of the cached way.
  const int probe_every = static_cast<int>(SlotWriteChooser::kProbeEvery);
  EXPECT_LE(run_calls(chooser, 4 << 20, 2 * probe_every, cached_fast), probe_every + 1);
  EXPECT_EQ(run_calls(chooser, 4 << 20, calls, cached_fast), 5);
}

TEST(SlotWriteChooser, OneSlowCallDoesNotSwitch) {
  SlotWriteChooser chooser;
  const auto cached_fast = [](SlotWrites w) { return w == SlotWrites::kCached ? 1e-3 : 3e-3; };
  run_calls(chooser, 1 << 20, 20, cached_fast);
  ASSERT_EQ(chooser.next(1 << 20), SlotWrites::kCached);
  chooser.record(1 << 20, SlotWrites::kCached, 0.1);  // held up by another process
  EXPECT_EQ(chooser.next(1 << 20), SlotWrites::kCached);
  // Slow for good: with the held-up call, kWindow slow calls switch to streaming.
  const auto cached_slow = [](SlotWrites w) { return w == SlotWrites::kCached ? 0.1 : 3e-3; };
  EXPECT_EQ(run_calls(chooser, 1 << 20, 8, cached_slow), 8 - static_cast<int>(SlotWriteChooser::kWindow - 1));
}

TEST(SlotWriteChooser, SizeClassesChooseApart) {
  SlotWriteChooser chooser;
  const auto streaming_fast = [](SlotWrites w) { return w == SlotWrites::kStreaming ? 1e-3 : 2e-3; };
  const auto cached_fast = [](SlotWrites w) { return w == SlotWrites::kCached ? 1e-5 : 2e-5; };
  run_calls(chooser, 64 << 20, 10, streaming_fast);
  run_calls(chooser, 256 << 10, 10, cached_fast);
  EXPECT_EQ(chooser.next(64 << 20), SlotWrites::kStreaming);
  EXPECT_EQ(chooser.next(256 << 10), SlotWrites::kCached);
  EXPECT_EQ(chooser.next((256 << 10) + 1000), SlotWrites::kCached);  // the same class (up to 512 KiB)
}

}  // namespace
}  // namespace batchai::train::detail
