// Marks inline functions that the CPU backend and the CUDA kernels share.
#pragma once

#if defined(__CUDACC__)
#define BATCHAI_HOST_DEVICE __host__ __device__
#else
#define BATCHAI_HOST_DEVICE
#endif
