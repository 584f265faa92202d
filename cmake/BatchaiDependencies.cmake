# Third-party dependencies, all from Debian packages (cmake/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(MPI REQUIRED COMPONENTS C)
# C++ code includes mpi.h too: keep Open MPI's (and MPICH's) deprecated C++ bindings out.
set_property(TARGET MPI::MPI_C APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(yaml-cpp REQUIRED)
# The trainer's CPU math (src/train): oneDNN (convolutions; Debian's libdnnl-dev) and OpenBLAS'
# CBLAS (dense layers), one OpenMP team for both; libcurl downloads the CIFAR-10 archive.
find_package(dnnl REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(CURL REQUIRED)
find_library(BATCHAI_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
find_path(BATCHAI_CBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas openblas-pthread REQUIRED)
# `batchai serve` (src/serve): Boost.Beast over Boost.Asio (header-only, Debian's libboost-dev;
# docs/adr/0004) and OpenSSL 3 for TLS and the self-signed certificate. cpp-httplib stays the
# tests' HTTPS client only.
find_package(Boost 1.74 REQUIRED)
find_package(OpenSSL 3 REQUIRED)
if(BATCHAI_BUILD_TESTS OR BATCHAI_BUILD_BENCH)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(BATCHAI_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
endif()
if(BATCHAI_BUILD_TESTS OR BATCHAI_BUILD_BENCH)
  # The test and benchmark drivers written in Python (argparse parity, bench_jobs.py) and bash.
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  find_program(BATCHAI_BASH bash REQUIRED)
endif()
if(BATCHAI_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(BATCHAI_BUILD_BENCH)
  find_package(benchmark QUIET)
endif()

# HDF5's CMake variables as one imported target.
if(NOT TARGET batchai_hdf5)
  add_library(batchai_hdf5 INTERFACE)
  target_include_directories(batchai_hdf5 SYSTEM INTERFACE ${HDF5_INCLUDE_DIRS})
  target_link_libraries(batchai_hdf5 INTERFACE ${HDF5_C_LIBRARIES})
  target_compile_definitions(batchai_hdf5 INTERFACE ${HDF5_DEFINITIONS})
endif()

# OpenBLAS with its cblas.h as one target.
add_library(batchai_openblas INTERFACE)
target_include_directories(batchai_openblas SYSTEM INTERFACE ${BATCHAI_CBLAS_INCLUDE_DIR})
target_link_libraries(batchai_openblas INTERFACE ${BATCHAI_OPENBLAS_LIBRARY})

# The CUDA toolkit, cuDNN and NCCL, when present (BATCHAI_CUDA): sets BATCHAI_CUDA_ENABLED, with
# which src/train_cuda builds the CUDA plugin and src/cli makes the executable depend on it.
include(BatchaiCuda)
