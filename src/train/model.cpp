// The sequential model: buffer allocation over the inferred shapes, Glorot init, forward and backward.
#include "model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "batchai/common/errors.hpp"
#include "batchai/train/counter_rng.hpp"

namespace batchai::train {
namespace {

using Clock = std::chrono::steady_clock;

// A view of the first `count` floats of a buffer (the current batch of a max-batch buffer).
Buffer view(const Buffer& b, std::size_t count) { return Buffer{b.data, count, b.kind}; }

}  // namespace

// One layer's shapes, parameter offsets and max-batch buffers (output and its gradient).
struct Model::Layer : LayerShape {
  LayerSpec spec;
  std::size_t w_off = 0, b_off = 0;
  Buffer y, dy, mask, routes;  // routes: a routed pooling's
  Layout x_layout = Layout::kNhwc, y_layout = Layout::kNhwc;  // x: the layer before's y
  // A pooling's backward also does its neighbours' (plan_fusions): the ReLU's of the layer before
  // (relu_of_x) and a dropout's after it (takes_dropout); on those two, backward_in_pool.
  bool relu_of_x = false, takes_dropout = false, backward_in_pool = false;
  // A pooling that routes (routes allocated); routed_now: it did in this step's forward, so its
  // backward takes `routing`.
  bool routed_now = false;
  PoolRouting routing{};
  ConvShape conv(int n) const {
    return ConvShape{n, ih, iw, ic, oc, kConvKernel, spec.same ? (kConvKernel - 1) / 2 : 0, x_layout, y_layout};
  }
  DenseShape dense(int n) const { return DenseShape{n, ih * iw * ic, oc}; }
};

Model::Model(Backend& backend, std::vector<LayerSpec> specs, int max_batch, int h, int w, int c, int classes)
    : backend_(backend), specs_(std::move(specs)), max_batch_(max_batch), h_(h), w_(w), c_(c),
      classes_(classes) {
  if (max_batch <= 0) throw InvalidArgument("batch size must be positive");
  const std::vector<LayerShape> shapes = infer_shapes(specs_, h, w, c);
  table_ = param_table_for(specs_, shapes);
  params_ = backend_.allocate(train::param_count(table_));
  grads_ = backend_.allocate(train::param_count(table_));
  input_ = backend_.allocate(static_cast<std::size_t>(max_batch) * h * w * c);
  labels_ = backend_.allocate(static_cast<std::size_t>(max_batch));
  std::size_t entry = 0;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    Layer l{shapes[i], specs_[i], 0, 0, {}, {}, {}, {}};
    if (l.spec.kind == LayerKind::kConv || l.spec.kind == LayerKind::kDense) {
      l.w_off = table_[entry++].offset;
      l.b_off = table_[entry++].offset;
    }
    l.y = backend_.allocate(max_batch * l.out_size());
    l.dy = backend_.allocate(max_batch * l.out_size());
    if (l.spec.kind == LayerKind::kDropout) l.mask = backend_.allocate(max_batch * l.out_size());
    if (l.spec.kind == LayerKind::kMaxPool && backend_.pools_by_routes()) {
      l.routes = backend_.allocate(route_floats(static_cast<std::size_t>(max_batch) * l.out_size()));
    }
    layers_.push_back(l);
  }
  const std::size_t outputs = layers_.empty() ? 0 : layers_.back().out_size();
  if (outputs != static_cast<std::size_t>(classes)) {
    throw InvalidArgument("the network must end in " + std::to_string(classes) + " outputs");
  }
  dlogits_ = layers_.back().dy;
  plan_layouts();
  plan_fusions();
  times_.resize(layers_.size());
  for (std::size_t i = 0; i < layers_.size(); ++i) times_[i].name = layers_[i].spec.name;
}

Model::~Model() {
  for (auto& l : layers_) {
    backend_.release(l.y);
    backend_.release(l.dy);
    if (l.mask.data != nullptr) backend_.release(l.mask);
    if (l.routes.data != nullptr) backend_.release(l.routes);
  }
  backend_.release(params_);
  backend_.release(grads_);
  backend_.release(input_);
  backend_.release(labels_);
}

void Model::plan_layouts() {
  // Only the chain the backend measured: the input's convolution, the next, then a pooling,
  // which writes NHWC for everything after it.
  if (layers_.size() < 3) return;
  Layer &first = layers_[0], &second = layers_[1], &pool = layers_[2];
  if (first.spec.kind != LayerKind::kConv || second.spec.kind != LayerKind::kConv ||
      pool.spec.kind != LayerKind::kMaxPool) {
    return;
  }
  if (!backend_.blocked_chain_pays(first.conv(max_batch_), second.conv(max_batch_))) return;
  first.x_layout = Layout::kNchw;  // the batch goes up channels-first
  first.y_layout = second.x_layout = second.y_layout = pool.x_layout = Layout::kNchw16c;
  // Then, from each routed pooling that reads blocked, the convolutions after it (past a dropout)
  // that want blocked activations (Backend::conv_wants_blocked) and the pooling after them.
  for (std::size_t i = 2; i < layers_.size(); ++i) {
    Layer& from = layers_[i];
    if (from.spec.kind != LayerKind::kMaxPool || from.x_layout != Layout::kNchw16c || from.routes.data == nullptr) {
      continue;
    }
    std::size_t j = i + 1;
    if (j < layers_.size() && layers_[j].spec.kind == LayerKind::kDropout) ++j;
    std::size_t k = j;
    for (; k < layers_.size() && layers_[k].spec.kind == LayerKind::kConv; ++k) {
      ConvShape s = layers_[k].conv(max_batch_);
      s.x_layout = s.y_layout = Layout::kNchw16c;
      if (!backend_.conv_wants_blocked(s)) break;
    }
    if (k == j || k == layers_.size() || layers_[k].spec.kind != LayerKind::kMaxPool) continue;
    from.y_layout = Layout::kNchw16c;
    for (std::size_t m = j; m < k; ++m) layers_[m].x_layout = layers_[m].y_layout = Layout::kNchw16c;
    layers_[k].x_layout = Layout::kNchw16c;
  }
}

void Model::plan_fusions() {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    Layer& pool = layers_[i];
    if (pool.spec.kind != LayerKind::kMaxPool) continue;
    if (i > 0 && layers_[i - 1].spec.relu) {  // a convolution's or a dense layer's
      pool.relu_of_x = true;
      layers_[i - 1].backward_in_pool = true;
    }
    if (i + 1 < layers_.size() && layers_[i + 1].spec.kind == LayerKind::kDropout) {
      pool.takes_dropout = true;
      layers_[i + 1].backward_in_pool = true;
    }
  }
}

PoolRouting Model::pool_routing(std::size_t i, bool dropout, std::uint64_t seed, std::uint64_t first_image_key) const {
  const Layer& pool = layers_[i];
  PoolRouting r;
  r.relu_of_x = pool.relu_of_x;
  if (pool.takes_dropout && dropout && layers_[i + 1].spec.rate > 0.0f) {
    r.dropout_rate = layers_[i + 1].spec.rate;
    r.layer_stream = dropout_layer_stream(seed, i + 1);
    r.first_image_key = first_image_key;
  }
  return r;
}

void Model::init_glorot(std::uint64_t seed) {
  std::vector<float> host(params_.size, 0.0f);
  std::uint64_t counter = splitmix64(seed);
  for (const auto& e : table_) {
    if (e.weight != "kernel:0") continue;  // biases stay zero
    const double receptive = e.shape.size() == 4 ? e.shape[0] * e.shape[1] : 1.0;
    const double fan_in = receptive * e.shape[e.shape.size() - 2];
    const double fan_out = receptive * e.shape.back();
    const double limit = std::sqrt(6.0 / (fan_in + fan_out));
    for (std::size_t i = 0; i < e.size(); ++i) {
      const double u = unit_interval(splitmix64(counter++));
      host[e.offset + i] = static_cast<float>((2.0 * u - 1.0) * limit);
    }
  }
  set_params(host);
}

void Model::set_params(const std::vector<float>& host) {
  if (host.size() != params_.size) {
    throw InvalidArgument("expected " + std::to_string(params_.size) + " parameters, got " +
                          std::to_string(host.size()));
  }
  backend_.upload(params_, host.data(), host.size());
}

std::vector<float> Model::get_params() const {
  std::vector<float> host(params_.size);
  backend_.download(host.data(), params_, host.size());
  return host;
}

std::vector<float> Model::get_grads() const {
  std::vector<float> host(grads_.size);
  backend_.download(host.data(), grads_, host.size());
  return host;
}

void Model::zero_grads() {
  backend_.fill(grads_, 0.0f);
  folded_.clear();
}

std::vector<float> Model::logits(int n) const {
  std::vector<float> host(static_cast<std::size_t>(n) * classes_);
  backend_.download(host.data(), layers_.back().y, host.size());
  return host;
}

BatchStats Model::train_batch(const float* x, const float* labels, int n, bool dropout,
                              std::uint64_t dropout_seed, std::uint64_t first_image_key) {
  backend_.zero_gradients(grads_);
  folded_.clear();
  BatchStats stats = forward(x, labels, n, dropout, dropout_seed, first_image_key, true);
  backward(n);
  std::reverse(folded_.begin(), folded_.end());  // backward went from the last layer
  backend_.settle_gradients(grads_);
  return stats;
}

BatchStats Model::evaluate_batch(const float* x, const float* labels, int n) {
  return forward(x, labels, n, false, 0, 0, false);
}

std::vector<Model::DropoutSite> Model::dropout_sites() const {
  std::vector<DropoutSite> sites;
  for (std::size_t i = 0; i < layers_.size(); ++i)
    if (layers_[i].spec.kind == LayerKind::kDropout && layers_[i].spec.rate > 0.0f)
      sites.push_back({i, static_cast<std::size_t>(layers_[i].out_size()), layers_[i].spec.rate});
  return sites;
}

BatchStats Model::forward(const float* x, const float* labels, int n, bool dropout, std::uint64_t seed,
                          std::uint64_t first_image_key, bool want_grad) {
  if (n <= 0 || n > max_batch_) {
    throw InvalidArgument("batch of " + std::to_string(n) + " images does not fit the model's batch size " +
                          std::to_string(max_batch_));
  }
  backend_.upload_images(input_, x, n, h_, w_, c_, layers_.front().x_layout);
  backend_.upload(labels_, labels, static_cast<std::size_t>(n));
  const Buffer* in = &input_;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    Layer& l = layers_[i];
    const auto t0 = timing_ ? Clock::now() : Clock::time_point{};
    switch (l.spec.kind) {
      case LayerKind::kConv:
        backend_.conv2d_forward(l.conv(n), *in, params_, l.w_off, l.b_off, l.y, l.spec.relu);
        break;
      case LayerKind::kDense:
        backend_.dense_forward(l.dense(n), *in, params_, l.w_off, l.b_off, l.y, l.spec.relu);
        break;
      case LayerKind::kMaxPool:
        l.routed_now = want_grad && l.routes.data != nullptr;
        if (l.routed_now) {
          l.routing = pool_routing(i, dropout, seed, first_image_key);
          backend_.maxpool2_forward_routed(n, l.ih, l.iw, l.ic, *in, {l.x_layout, l.y_layout}, l.routing,
                                           l.routing.dropout_rate > 0.0f ? layers_[i + 1].y : l.y, l.routes);
        } else {
          backend_.maxpool2_forward(n, l.ih, l.iw, l.ic, *in, {l.x_layout, l.y_layout}, l.y);
        }
        break;
      case LayerKind::kDropout: {
        Buffer out = view(l.y, n * l.out_size());
        const Layer* pool = i > 0 ? &layers_[i - 1] : nullptr;
        if (pool != nullptr && pool->routed_now && pool->routing.dropout_rate > 0.0f) break;  // the pooling wrote y
        if (dropout && l.spec.rate > 0.0f) {
          Buffer mask = view(l.mask, out.size);
          backend_.dropout_forward(view(*in, out.size), out, mask, l.spec.rate, dropout_layer_stream(seed, i),
                                   first_image_key, static_cast<std::size_t>(l.out_size()));
        } else {
          Buffer ones = view(l.mask, out.size);
          backend_.fill(ones, 1.0f);
          backend_.dropout_backward(view(*in, out.size), ones, out);  // identity copy
        }
        break;
      }
    }
    if (timing_) times_[i].forward_s += std::chrono::duration<double>(Clock::now() - t0).count();
    in = &l.y;
  }
  BatchStats stats;
  stats.count = n;
  Buffer* dlogits = want_grad ? &dlogits_ : nullptr;
  backend_.softmax_cross_entropy(n, classes_, layers_.back().y, labels_, dlogits, &stats.loss_sum,
                                 &stats.correct);
  return stats;
}

void Model::backward(int n) {
  for (std::size_t i = layers_.size(); i-- > 0;) {
    Layer& l = layers_[i];
    const Buffer& x = i == 0 ? input_ : layers_[i - 1].y;
    Buffer* dx = i == 0 ? nullptr : &layers_[i - 1].dy;
    const auto t0 = timing_ ? Clock::now() : Clock::time_point{};
    switch (l.spec.kind) {
      // A layer whose ReLU (or, a dropout, whose whole backward) the pooling after or before it did.
      case LayerKind::kConv:
        backend_.conv2d_backward(l.conv(n), x, params_, l.w_off, l.y, l.dy, dx, grads_, l.b_off,
                                 l.spec.relu && !l.backward_in_pool);
        break;
      case LayerKind::kDense:
        if (fold_dense_ && backend_.dense_rmsprop_folds(l.dense(n))) {
          backend_.dense_backward_data(l.dense(n), params_, l.w_off, l.y, l.dy, dx, grads_, l.b_off,
                                       l.spec.relu && !l.backward_in_pool);
          folded_.push_back(FoldedDense{l.dense(n), &x, &l.dy, l.w_off, l.b_off});
          break;
        }
        backend_.dense_backward(l.dense(n), x, params_, l.w_off, l.y, l.dy, dx, grads_, l.b_off,
                                l.spec.relu && !l.backward_in_pool);
        break;
      case LayerKind::kMaxPool:
        if (dx != nullptr && l.routed_now) {
          const std::size_t pooled = static_cast<std::size_t>(n) * l.out_size();
          const Buffer dy = view(l.takes_dropout ? layers_[i + 1].dy : l.dy, pooled);
          backend_.maxpool2_backward_routed(n, l.ih, l.iw, l.ic, l.routes, dy, l.routing, {l.x_layout, l.y_layout},
                                            *dx);
        } else if (dx != nullptr) {
          // With a dropout after it, dy is the dropout's, which this multiplies by its mask.
          const std::size_t pooled = static_cast<std::size_t>(n) * l.out_size();
          const Layer* dropout = l.takes_dropout ? &layers_[i + 1] : nullptr;
          const Buffer mask = dropout != nullptr ? view(dropout->mask, pooled) : Buffer{};
          const Buffer dy = view(dropout != nullptr ? dropout->dy : l.dy, pooled);
          const PoolBackwardFusion fused{dropout != nullptr ? &mask : nullptr, l.relu_of_x};
          backend_.maxpool2_backward(n, l.ih, l.iw, l.ic, x, {l.x_layout, l.y_layout}, l.y, dy, fused, *dx);
        }
        break;
      case LayerKind::kDropout:
        if (dx != nullptr && !l.backward_in_pool) {
          Buffer out = view(*dx, n * l.out_size());
          backend_.dropout_backward(view(l.dy, out.size), view(l.mask, out.size), out);
        }
        break;
    }
    if (timing_) times_[i].backward_s += std::chrono::duration<double>(Clock::now() - t0).count();
  }
}

}  // namespace batchai::train
