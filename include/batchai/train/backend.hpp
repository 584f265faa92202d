// The kernel seam of the trainer: every numeric operation of a training step, on buffers the
// backend owns (host memory for the CPU backend, device memory for CUDA). Callers never
// dereference a Buffer; host data crosses only through upload()/download(). Activations are
// NHWC (channels_last, as Keras) unless the Model and the backend agree on a blocked chain
// (blocked_chain_pays), weights in Keras layout, so Flatten is free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "batchai/train/buffer.hpp"
#include "batchai/train/communicator.hpp"

namespace batchai::train {

// How an activation (and its gradient) lies in its buffer. kNchw16c is oneDNN's blocked
// layout: per image, the channels in blocks of 16 (c a multiple of 16), each block (h, w, 16);
// kNchw is plain channels-first, the input of a blocked chain (upload_images writes it). All
// take the same number of floats.
enum class Layout { kNhwc, kNchw16c, kNchw };
// Where a 2x2 pooling's x (and dx) and y (and dy) lie: a backend that pools in a blocked layout
// takes kNchw16c for x alone (y NHWC) or for both.
struct PoolLayouts {
  Layout x = Layout::kNhwc, y = Layout::kNhwc;
};

// Conv2D with stride 1, square kernel, input (n, h, w, c) -> output (n, oh, ow, out), x and dx
// in x_layout, y and dy in y_layout.
struct ConvShape {
  int n = 0, h = 0, w = 0, c = 0;  // input
  int out = 0;                     // output channels
  int k = 3;                       // kernel size
  int pad = 0;                     // 1 for "same" with k=3, 0 for "valid"
  Layout x_layout = Layout::kNhwc, y_layout = Layout::kNhwc;
  int oh() const { return h + 2 * pad - k + 1; }
  int ow() const { return w + 2 * pad - k + 1; }
};

// Dense: x (n, in) -> y (n, out); kernel (in, out).
struct DenseShape {
  int n = 0, in = 0, out = 0;
};

// The neighbours' backward passes a pooling's backward does on the way, so that they need no pass
// over memory of their own (the same floats as separate passes): a dropout's right after the
// pooling (g = dy * dy_mask, its mask) and the ReLU's whose output x is (a routed gradient kept
// only where the window's maximum is > 0, which is where x > 0 at the maximum).
struct PoolBackwardFusion {
  const Buffer* dy_mask = nullptr;
  bool relu_of_x = false;
};

// What a routed pooling (Backend::pools_by_routes) does besides pooling: the ReLU's backward as
// PoolBackwardFusion's, and a dropout right after it when dropout_rate > 0: the forward writes the
// dropout's output (the maximum times its mask, drawn as dropout_forward draws it from layer_stream
// and first_image_key; the mask is not stored), and the backward takes the dropout's dy.
struct PoolRouting {
  bool relu_of_x = false;
  float dropout_rate = 0.0f;
  std::uint64_t layer_stream = 0, first_image_key = 0;
};
// The floats a routed pooling's routes take: a byte per output.
inline std::size_t route_floats(std::size_t outputs) { return (outputs + sizeof(float) - 1) / sizeof(float); }

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Whether the step computes on the host's cores (the CPU backend): then the next batch is
  // prepared inside the step on the same threads, not beside it (augment.hpp's PrepareOn).
  virtual bool computes_on_host() const = 0;

  // Memory. allocate() returns zeroed memory tagged with where it lives (kDevice for device
  // backends); release() accepts what allocate() returned.
  virtual Buffer allocate(std::size_t count) = 0;
  virtual void release(Buffer& buffer) = 0;
  virtual void upload(Buffer& dst, const float* host, std::size_t count, std::size_t offset = 0) = 0;
  virtual void download(float* host, const Buffer& src, std::size_t count, std::size_t offset = 0) = 0;
  // Uploads n images of (h, w, c), NHWC on the host, into dst in `layout` (kNhwc or kNchw).
  virtual void upload_images(Buffer& dst, const float* host_nhwc, int n, int h, int w, int c, Layout layout) = 0;
  virtual void fill(Buffer& dst, float value) = 0;
  // Zeroes a gradient arena for the backward calls that add into it, then settles it once they are
  // done: a backend may defer the zeroing to each slot's first write (the CPU backend: a write that
  // overwrites, no pass of its own) and zero in settle whatever no call wrote. In between, grads
  // is written only by the backward calls and read by nobody.
  virtual void zero_gradients(Buffer& grads) { fill(grads, 0.0f); }
  virtual void settle_gradients(Buffer& grads) { (void)grads; }

  // y = act(conv(x, w) + b); act = ReLU when `relu`. `w` (k, k, c, out), `b` (out).
  virtual void conv2d_forward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                              std::size_t b_off, Buffer& y, bool relu) = 0;
  // Given y (the forward output) and dy: when `relu`, dy is masked in place by y > 0 (without
  // dx, what dy holds afterwards is unspecified); then dw += grad, db += grad (accumulate;
  // zeroing is explicit), dx = input gradient unless `dx` is null (first layer). Weight
  // gradients live in `dw` at the same offsets as in `w`.
  virtual void conv2d_backward(const ConvShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                               const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                               bool relu) = 0;
  virtual void dense_forward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                             std::size_t b_off, Buffer& y, bool relu) = 0;
  virtual void dense_backward(const DenseShape& s, const Buffer& x, const Buffer& w, std::size_t w_off,
                              const Buffer& y, Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off,
                              bool relu) = 0;
  // A run of one rank, where no allreduce stands between the backward pass and the update, may
  // update a dense layer straight from the factors of its gradient (x, and dy masked by the ReLU),
  // never storing the gradient. dense_rmsprop_folds says for which shapes the backend can. The
  // layer's backward is then dense_backward_data: dy masked by the ReLU when `relu`, dx unless
  // null, and the layer's slots of dw left as they are (unspecified) in place of its gradient;
  // after it, rmsprop_dense_from_factors updates the kernel (w_off) and bias (b_off) as
  // rmsprop_update would with that gradient.
  virtual bool dense_rmsprop_folds(const DenseShape& s) {
    (void)s;
    return false;
  }
  virtual void dense_backward_data(const DenseShape& s, const Buffer& w, std::size_t w_off, const Buffer& y,
                                   Buffer& dy, Buffer* dx, Buffer& dw, std::size_t b_off, bool relu);
  virtual void rmsprop_dense_from_factors(const DenseShape& s, const Buffer& x, const Buffer& dy, Buffer& params,
                                          Buffer& ms, std::size_t w_off, std::size_t b_off, float lr, float rho,
                                          float eps);
  // 2x2 max pooling, stride 2, floor: x (n, h, w, c) in layouts.x -> y (n, h/2, w/2, c) in layouts.y.
  virtual void maxpool2_forward(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts, Buffer& y) = 0;
  // dx (as x) = g routed to the first maximum of each window (recomputed from x and y);
  // other dx = 0. g = dy, with the backward passes `fused` names done on the way (see there).
  virtual void maxpool2_backward(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts, const Buffer& y,
                                 const Buffer& dy, const PoolBackwardFusion& fused, Buffer& dx) = 0;
  // Whether the pooling may route instead, in a training step: its forward also writes, per
  // output, which input of the window held the first maximum and whether a gradient passes there
  // (`routes`, route_floats(outputs) floats), so that its backward reads neither x, y nor a
  // dropout's mask; a dropout after it is done on the way (PoolRouting). The same floats as
  // maxpool2_forward, dropout_forward and maxpool2_backward with PoolBackwardFusion.
  virtual bool pools_by_routes() const { return false; }
  virtual void maxpool2_forward_routed(int n, int h, int w, int c, const Buffer& x, PoolLayouts layouts,
                                       const PoolRouting& routing, Buffer& y, Buffer& routes);
  virtual void maxpool2_backward_routed(int n, int h, int w, int c, const Buffer& routes, const Buffer& dy,
                                        const PoolRouting& routing, PoolLayouts layouts, Buffer& dx);
  // Whether a first convolution `first` (its input the network's), the convolution `second` on
  // its output and a 2x2 pooling on that run faster with the two convolutions' outputs (and
  // gradients) in kNchw16c and the first's input in kNchw. The Model asks once and passes the
  // layouts in ConvShape, to the pooling and to upload_images. A backend that answers false is
  // never given any layout but kNhwc.
  virtual bool blocked_chain_pays(const ConvShape& first, const ConvShape& second) {
    (void)first, (void)second;
    return false;
  }
  // Whether convolution s (its layouts kNchw16c) runs kernels that read and write kNchw16c only,
  // which NHWC activations would reach through copies: the Model then keeps a run of such
  // convolutions blocked, from the routed pooling before them (whose input is blocked already) to
  // the pooling after them. A backend that answers true pools by routes in PoolLayouts{kNchw16c,
  // kNchw16c} too.
  virtual bool conv_wants_blocked(const ConvShape& s) {
    (void)s;
    return false;
  }
  // Inverted dropout over images of `per_image` floats (x.size / per_image of them): mask = 0 or
  // 1/(1-rate); y = x * mask. Image j's draws come from counter_rng.hpp's image_stream(
  // layer_stream, first_image_key + j) alone. Backward: dx = dy * mask.
  virtual void dropout_forward(const Buffer& x, Buffer& y, Buffer& mask, float rate, std::uint64_t layer_stream,
                               std::uint64_t first_image_key, std::size_t per_image) = 0;
  virtual void dropout_backward(const Buffer& dy, const Buffer& mask, Buffer& dx) = 0;
  // Softmax + categorical cross entropy over logits (n, classes) with labels (n) given as class
  // indices stored as floats. Writes dlogits = (softmax - onehot) / n and, on the host, the summed
  // loss and the number of correct arg-max predictions.
  virtual void softmax_cross_entropy(int n, int classes, const Buffer& logits, const Buffer& labels,
                                     Buffer* dlogits, double* loss_sum, int* correct) = 0;
  // Keras RMSprop: ms = rho*ms + (1-rho)*g^2; p -= lr * g / (sqrt(ms) + eps).
  virtual void rmsprop_update(Buffer& params, const Buffer& grads, Buffer& ms, float lr, float rho,
                              float eps) = 0;
  virtual void scale(Buffer& x, float factor) = 0;
  // Worker threads used inside kernels (CPU); ignored by device backends.
  virtual void set_threads(int threads) = 0;
};

enum class BackendKind { kCpu, kCuda, kAuto };

// The arithmetic of the step (TrainOptions::precision). kMixedBfloat16 is the CPU backend's only,
// where oneDNN runs its bfloat16 kernels (onednn_runs_bf16 in src/train/cpu/dnnl_memory.hpp).
enum class Precision { kFloat32, kMixedBfloat16 };
Precision parse_precision(const std::string& text);  // "float32" | "mixed_bfloat16"

// kCpu: the CPU backend. kCuda: the CUDA backend, registered directly (static links: tests,
// benchmarks) or loaded from the plugin file `cuda_plugin` names (see below; the caller's
// composition root chooses it, empty: none); throws batchai::Error when neither exists or no
// device is present. kAuto: CUDA when available and a device exists, else CPU. A precision the
// backend it would make cannot run throws InvalidArgument.
std::unique_ptr<Backend> make_backend(BackendKind kind, int threads, const std::string& cuda_plugin = {},
                                      Precision precision = Precision::kFloat32);
BackendKind parse_backend_kind(const std::string& text);  // "cpu" | "cuda" | "auto"

// Hook for the optional CUDA target. The factory returns null when no device is present.
using BackendFactory = std::unique_ptr<Backend> (*)(int threads);
void register_cuda_backend_factory(BackendFactory factory);

// Gradients of a device backend live in device memory, which a plain MPI communicator cannot
// read. The CUDA target registers a factory for a communicator that can (NCCL, or host-staged
// through the MPI ring); every rank must call make_device_communicator() together.
using DeviceCommunicatorFactory = std::unique_ptr<Communicator> (*)(AllreduceAlgorithm host_algorithm);
void register_device_communicator_factory(DeviceCommunicatorFactory factory);
// Null when no device communicator was registered.
std::unique_ptr<Communicator> make_device_communicator(AllreduceAlgorithm host_algorithm);
// Whether one is registered (the chooser's test for its NCCL candidate, communicator_choice.hpp).
bool has_device_communicator();

// The CUDA backend ships as a plugin, kCudaPluginFile (trainer_plugin.hpp) beside the executable (or the file
// $BATCHAI_CUDA_PLUGIN names; src/cli/compose.cpp decides), so that the CUDA libraries — cuBLASLt alone costs tens of
// milliseconds of start-up — load only when a training asks for a GPU, never for CLI commands.
// Its one entry point, looked up with dlsym, hands over the two factories above:
//   extern "C" int batchai_cuda_plugin(int abi, BackendFactory*, DeviceCommunicatorFactory*);
// It returns 0, or non-zero when `abi` is not the kCudaPluginAbi it was built with.
inline constexpr const char* kCudaPluginEntry = "batchai_cuda_plugin";
inline constexpr int kCudaPluginAbi = 6;  // 2: Buffer carries its BufferKind; 3: activation layouts; 4: pooling
                                         // backward fusions; 5: dense updates from the gradient's factors;
                                         // 6: routed poolings

}  // namespace batchai::train
