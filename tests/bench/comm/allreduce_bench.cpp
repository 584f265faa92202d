// Allreduce benchmark: our MPI ring and the shared-memory communicator vs MPI_Allreduce side by
// side, sizes 4 KB .. 64 MB, printing time, algbw (bytes / time) and busbw (algbw * 2(n-1)/n, the
// per-link rate NCCL reports). Run under mpiexec (see run.sh). Options: --min-kb, --max-kb,
// --factor, --chunk-kb a,b,c (ring chunk sizes to compare; 0 = unchunked), --shm-kb a,b (the
// shared-memory communicator's chunk sizes; default = its own; none = leave it out), --shm-writes
// a,b (BATCHAI_SHM_WRITES of each shared-memory column: auto, cached, streaming; default auto),
// --seconds (time budget per measurement).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include "batchai/common/errors.hpp"
#include "batchai/train/communicator.hpp"
#include "batchai/train/mpi_communicator.hpp"
#include "batchai/train/mpi_session.hpp"
#include "comm/shm_communicator.hpp"

namespace {

using batchai::train::AllreduceAlgorithm;
using batchai::train::Communicator;

struct Options {
  std::size_t min_bytes = 4 << 10;
  std::size_t max_bytes = 64 << 20;
  std::size_t factor = 4;
  std::vector<std::string> chunk_kb = {"1024"};
  std::vector<std::string> shm_kb = {"default"};
  std::vector<std::string> shm_writes = {"auto"};
  double seconds = 0.5;
};

std::vector<std::string> split(const std::string& val) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= val.size();) {
    const std::size_t comma = std::min(val.find(',', at), val.size());
    parts.push_back(val.substr(at, comma - at));
    at = comma + 1;
  }
  return parts;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string val = argv[i + 1];
    if (key == "--min-kb") o.min_bytes = std::stoul(val) << 10;
    else if (key == "--max-kb") o.max_bytes = std::stoul(val) << 10;
    else if (key == "--factor") o.factor = std::max<std::size_t>(2, std::stoul(val));
    else if (key == "--shm-writes") o.shm_writes = split(val);
    else if (key == "--seconds") o.seconds = std::stod(val);
    else if (key == "--chunk-kb") o.chunk_kb = split(val);
    else if (key == "--shm-kb") o.shm_kb = val == "none" ? std::vector<std::string>{} : split(val);
    else {
      throw batchai::InvalidArgument("unknown option " + key +
                                     " (use --min-kb, --max-kb, --factor, --chunk-kb, --shm-kb, --shm-writes, --seconds)");
    }
  }
  return o;
}

// Seconds per call: the slowest rank's average over a batch of calls (a collective is as fast
// as its last rank). Batches of all algorithms are interleaved, so bursts of load from other
// processes on a shared machine hit them alike: times are the best batch of each, and the ratio
// is the median over batches of (MPI time / ring time) within the same round.
constexpr int kBatches = 15;

double time_batch(Communicator& comm, std::vector<float>& buf, std::size_t count, int iters) {
  comm.barrier();
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) comm.allreduce_sum(buf.data(), count);
  double per_call = (MPI_Wtime() - t0) / iters;
  MPI_Allreduce(MPI_IN_PLACE, &per_call, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return per_call;
}

// Calls per batch so that one batch takes about budget / kBatches (rank 0 decides).
int calibrate(Communicator& comm, std::vector<float>& buf, std::size_t count, double budget) {
  comm.allreduce_sum(buf.data(), count);  // warm-up: scratch buffers, connections
  double one = time_batch(comm, buf, count, 1);
  MPI_Bcast(&one, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return std::clamp(static_cast<int>(budget / kBatches / std::max(one, 1e-6)), 2, 1000);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string human(std::size_t bytes) {
  char b[32];
  if (bytes >= (1u << 20)) std::snprintf(b, sizeof b, "%zu MB", bytes >> 20);
  else std::snprintf(b, sizeof b, "%zu KB", bytes >> 10);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  batchai::train::MpiSession mpi(&argc, &argv);
  try {
    const Options o = parse(argc, argv);
    const int n = mpi.size();
    const double bus = n > 1 ? 2.0 * (n - 1) / n : 1.0;
    auto oracle = batchai::train::make_mpi_communicator(AllreduceAlgorithm::kMpi);
    std::vector<std::unique_ptr<Communicator>> rings;  // every contender, after MPI_Allreduce
    std::vector<std::string> labels;
    for (const auto& kb : o.chunk_kb) {
      ::setenv("BATCHAI_RING_CHUNK_KB", kb.c_str(), 1);
      rings.push_back(batchai::train::make_mpi_communicator(AllreduceAlgorithm::kRing));
      labels.push_back("ring" + kb + "k_us");
    }
    for (const auto& kb : o.shm_kb) {
      for (const auto& writes : o.shm_writes) {
        if (kb == "default") ::unsetenv("BATCHAI_SHM_CHUNK_KB");
        else ::setenv("BATCHAI_SHM_CHUNK_KB", kb.c_str(), 1);
        ::setenv("BATCHAI_SHM_WRITES", writes.c_str(), 1);
        std::string why;
        auto shm = batchai::train::make_shm_communicator(&why);
        if (!shm) throw batchai::Error("no shared-memory communicator: " + why);
        rings.push_back(std::move(shm));
        labels.push_back((kb == "default" ? "shm" : "shm" + kb + "k") + (writes == "auto" ? "" : "-" + writes) + "_us");
      }
    }
    std::vector<float> buf(o.max_bytes / sizeof(float), 0.0f);  // zeros: sums stay finite
    if (mpi.rank() == 0) {
      std::printf("# allreduce, %d ranks, float32 sum, best of %d batches; GB/s = 1e9 bytes/s; "
                  "busbw = algbw*2(n-1)/n; ratio = median over rounds of mpi / that column's time\n", n, kBatches);
      std::printf("%-8s %12s %9s %9s", "size", "mpi_us", "mpi_alg", "mpi_bus");
      for (const auto& label : labels) std::printf(" %12s %9s %9s %7s", label.c_str(), "alg", "bus", "ratio");
      std::printf("\n");
    }
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
      const std::size_t count = bytes / sizeof(float);
      std::vector<Communicator*> all = {oracle.get()};
      for (auto& ring : rings) all.push_back(ring.get());
      std::vector<int> iters;
      for (Communicator* c : all) iters.push_back(calibrate(*c, buf, count, o.seconds));
      std::vector<double> best(all.size(), 1e300);
      std::vector<std::vector<double>> ratios(all.size());
      for (int b = 0; b < kBatches; ++b) {
        std::vector<double> t(all.size());
        for (std::size_t k = 0; k < all.size(); ++k) {
          t[k] = time_batch(*all[k], buf, count, iters[k]);
          best[k] = std::min(best[k], t[k]);
        }
        for (std::size_t k = 1; k < all.size(); ++k) ratios[k].push_back(t[0] / t[k]);
      }
      const double t_mpi = best[0];
      const std::vector<double> t_ring(best.begin() + 1, best.end());
      if (mpi.rank() == 0) {
        const double alg_mpi = static_cast<double>(bytes) / t_mpi / 1e9;
        std::printf("%-8s %12.1f %9.3f %9.3f", human(bytes).c_str(), t_mpi * 1e6, alg_mpi,
                    alg_mpi * bus);
        for (std::size_t k = 0; k < t_ring.size(); ++k) {
          const double alg = static_cast<double>(bytes) / t_ring[k] / 1e9;
          std::printf(" %12.1f %9.3f %9.3f %6.2fx", t_ring[k] * 1e6, alg, alg * bus, median(ratios[k + 1]));
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allreduce_bench (rank %d): %s\n", mpi.rank(), e.what());
    batchai::train::MpiSession::abort_all(1);
  }
  return 0;
}
