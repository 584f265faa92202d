// The per-rank wrapper that mpirun starts once per rank (rank_exec.cpp); public because the CLI
// registers it as a hidden subcommand.
#pragma once
#include <string>
#include <vector>

namespace batchai::runtime {

// Hidden subcommand `batchai _rank-exec --nodes-file <file> -- <program> <args...>`: run by
// mpirun once per rank. Finds the rank (OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK), maps it
// to a node by the file's slots (node 0 gets the first `slots` ranks, ...), applies that node's
// environment and working folder, sets CUDA_VISIBLE_DEVICES to the local rank on GPU nodes
// and execs the program. Returns only on failure (127 unknown program, 2 bad arguments).
int run_rank_exec(const std::vector<std::string>& args);

// Name of the hidden subcommand.
inline constexpr const char* kRankExecCommand = "_rank-exec";

// The GPU a rank with `local_rank` on a node of `gpus` GPUs uses: entry local_rank % n of the
// CUDA_VISIBLE_DEVICES it was started with (`visible`: Slurm's GPUs of the allocation, "2,3"),
// or local_rank % gpus when none was given (a simulated node's 0..gpus-1).
std::string gpu_for_local_rank(int local_rank, int gpus, const char* visible);

}  // namespace batchai::runtime
