// The roofline table of train_bench (see roofline.hpp).
#include "roofline.hpp"

#include <cstdio>

#include "cpu/dnnl_conv.hpp"
#include "layer_limits.hpp"

namespace batchai::bench {
namespace {

namespace bt = train;
namespace cpu = train::cpu;

const cpu::CpuProfile::Entry* find(const cpu::CpuProfile& p, const std::string& op, const std::string& shape,
                                   const std::string& phase) {
  for (const auto& e : p.entries())
    if (e.op == op && e.shape == shape && e.phase == phase) return &e;
  return nullptr;
}

struct Printer {
  const RooflineInput& in;
  double accounted = 0.0;

  void row(const std::string& layer, const std::string& phase, const cpu::CpuProfile::Entry* e,
           const PhaseLimit* limit) {
    if (e == nullptr) return;
    // Medians, not means: a loaded machine takes whole time slices away from some calls.
    const double per_step = static_cast<double>(e->calls) / in.steps;
    const double s = e->median() * per_step;
    accounted += s;
    const double gflops = e->flops > 0 ? e->flops * per_step / s / 1e9 : 0.0;
    std::printf("| %s | %s | %.3f | %s | %s |", layer.c_str(), phase.c_str(), 1e3 * s,
                gflops > 0 ? std::to_string(static_cast<int>(gflops + 0.5)).c_str() : "",
                gflops > 0 ? (std::to_string(static_cast<int>(100 * gflops / in.sgemm_gflops + 0.5)) + "%").c_str() : "");
    if (limit != nullptr) {
      std::printf(" %.3f | %.2f | %.3f | %.2f | %s |\n", 1e3 * limit->seconds, s / limit->seconds,
                  1e3 * limit->cold_seconds, s / limit->cold_seconds, limit->impl.c_str());
    } else {
      std::printf(" | | | | |\n");
    }
  }
};

}  // namespace

void print_roofline(const RooflineInput& in) {
  const cpu::CpuProfile& p = *in.profile;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const std::vector<bt::LayerShape> shapes = bt::infer_shapes(in.specs, 32, 32, 3);
  Printer out{in};
  std::printf("\n| layer | phase | ms/step (median) | GFLOP/s | share of sgemm | limit ms | x limit | limit ms, "
              "caches evicted | x that | limit kernel (fastest oneDNN primitive alone, operands in cache) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < in.specs.size(); ++i) {
    const bt::LayerSpec& spec = in.specs[i];
    const bt::LayerShape& l = shapes[i];
    switch (spec.kind) {
      case bt::LayerKind::kConv: {
        const bt::ConvShape s{in.batch, l.ih, l.iw, l.ic, l.oc, bt::kConvKernel, spec.same ? 1 : 0};
        const LayerLimit lim =
            conv_limit(engine, s, spec.relu, in.limit_reps, cpu::conv_runs_bf16(s, in.bf16));
        const std::string label = cpu::conv_shape_label(s);
        out.row(spec.name, "fwd", find(p, "conv", label, "fwd"), &lim.forward);
        out.row(spec.name, "bwd-data", find(p, "conv", label, "bwd-data"), &lim.backward_data);
        out.row(spec.name, "bwd-weights", find(p, "conv", label, "bwd-weights"), &lim.backward_weights);
        // Where the backend folds the ReLU's backward into the weight gradient, the limit is
        // oneDNN's two primitives for that work.
        if (const auto* folded = find(p, "conv", label, "bwd-weights+relu")) {
          const PhaseLimit both = plus(lim.backward_weights, relu_backward_limit(engine, s, in.limit_reps));
          out.row(spec.name, "bwd-weights, its ReLU's backward in it", folded, &both);
        }
        out.row(spec.name, "ReLU mask (its activation's backward)", find(p, "conv", label, "relu-mask"), nullptr);
        break;
      }
      case bt::LayerKind::kDense: {
        const bt::DenseShape s{in.batch, l.ih * l.iw * l.ic, l.oc};
        const LayerLimit lim = dense_limit(engine, s, spec.relu, in.limit_reps);
        const std::string label = cpu::dense_shape_label(s);
        out.row(spec.name, "fwd", find(p, "dense", label, "fwd"), &lim.forward);
        out.row(spec.name, "bwd-data", find(p, "dense", label, "bwd-data"), &lim.backward_data);
        out.row(spec.name, "bwd-weights", find(p, "dense", label, "bwd-weights"), &lim.backward_weights);
        out.row(spec.name, "ReLU mask (its activation's backward)", find(p, "dense", label, "relu-mask"), nullptr);
        break;
      }
      case bt::LayerKind::kMaxPool: {
        const std::string label = cpu::elementwise_shape_label(l.ih, l.iw, l.ic);
        out.row(spec.name, "fwd", find(p, "maxpool", label, "fwd"), nullptr);
        out.row(spec.name, "fwd, the dropout after it included", find(p, "maxpool", label, "fwd+dropout"), nullptr);
        out.row(spec.name, "bwd", find(p, "maxpool", label, "bwd"), nullptr);
        break;
      }
      case bt::LayerKind::kDropout: {
        const std::string label = std::to_string(static_cast<long>(in.batch) * l.oh * l.ow * l.oc) + " floats";
        out.row(spec.name, "fwd", find(p, "dropout", label, "fwd"), nullptr);
        out.row(spec.name, "bwd", find(p, "dropout", label, "bwd"), nullptr);
        break;
      }
    }
  }
  for (const auto& e : p.entries()) {
    if (e.op == "loss") out.row("softmax + cross-entropy", e.phase, &e, nullptr);
    if (e.op == "rmsprop") {
      const bool folded = e.phase == "update-from-factors";
      const std::string what = folded ? "dense " + e.shape + ": weight gradient and RMSprop in one pass"
                                      : "RMSprop (" + e.shape + " weights)";
      out.row(what, e.phase, &e, nullptr);
    }
    if (e.op == "scale") out.row("allreduce hand-off: scale by 1/ranks", e.phase, &e, nullptr);
    if (e.op == "fill") {
      // "zero": the part of the gradient arena no layer wrote (its zeroing is deferred to the writes).
      const std::string what = e.phase == "zero" ? "gradient arena, slots no layer wrote, zeroed (" : "buffer filled (";
      out.row(what + e.shape + " floats)", e.phase, &e, nullptr);
    }
    if (e.op == "upload") out.row("batch upload (" + e.shape + " floats)", e.phase, &e, nullptr);
  }
  for (const auto& x : in.extra) {
    if (x.on_path) out.accounted += x.seconds_per_step;
    std::printf("| %s | %s | %.3f | | | | | | | %s |\n", x.name.c_str(), x.phase.c_str(), 1e3 * x.seconds_per_step,
                x.note.c_str());
  }
  std::printf("| the rest (step minus the rows above on its path) | | %.3f | | | | | | | |\n",
              1e3 * (in.step_seconds - out.accounted));
  const double gflops = in.step_flops / in.step_seconds / 1e9;
  std::printf("| **whole step** | | %.3f | %.0f | %.0f%% | | | | | |\n", 1e3 * in.step_seconds, gflops,
              100 * gflops / in.sgemm_gflops);
}

}  // namespace batchai::bench
