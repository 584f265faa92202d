// Backend memory as the trainer passes it around: a float block tagged with where it lives,
// so that the collectives can refuse a device buffer on a host-only (MPI) path.
#pragma once
#include <cstddef>

namespace batchai::train {

enum class BufferKind { kHost, kDevice };

// `data` may be a device address; only the owning backend dereferences it. Views of a buffer
// (a prefix for the current batch) keep its kind.
struct Buffer {
  float* data = nullptr;
  std::size_t size = 0;  // floats
  BufferKind kind = BufferKind::kHost;
};

}  // namespace batchai::train
