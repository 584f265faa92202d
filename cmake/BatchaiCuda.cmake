# Finds what the CUDA backend of the trainer needs: nvcc + the CUDA toolkit (cudart, cuBLAS),
# cuDNN 9 and NCCL 2. Sets BATCHAI_CUDA_ENABLED (TRUE/FALSE) and, when TRUE, enables the CUDA
# language and defines the imported targets batchai_cudnn and batchai_nccl.
# BATCHAI_CUDA: AUTO builds when everything is found, ON makes a missing piece a configure
# error, OFF skips. Include guard: safe to include from the top level and from src/train_cuda.
include_guard(GLOBAL)

set(BATCHAI_CUDA_ENABLED FALSE)
string(TOUPPER "${BATCHAI_CUDA}" _batchai_cuda_mode)
if(NOT _batchai_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "BATCHAI_CUDA='${BATCHAI_CUDA}' is not one of AUTO, ON, OFF")
endif()

# Reports a missing piece: an error under ON, a status line (and no CUDA target) under AUTO.
macro(_batchai_cuda_missing what)
  if(_batchai_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "BATCHAI_CUDA=ON but ${what}. Install it, point CMake at it "
                        "(CUDAToolkit_ROOT, CUDNN_ROOT, NCCL_ROOT) or configure with -DBATCHAI_CUDA=AUTO/OFF.")
  endif()
  message(STATUS "CUDA backend: skipped (${what}); the CPU build is unaffected")
  set(_batchai_cuda_ok FALSE)
endmacro()

set(_batchai_cuda_ok TRUE)
if(_batchai_cuda_mode STREQUAL "OFF")
  message(STATUS "CUDA backend: disabled (BATCHAI_CUDA=OFF)")
  set(_batchai_cuda_ok FALSE)
endif()

# Versioned toolkits (/usr/local/cuda-13.0) hold headers such as nccl.h that the unversioned
# link may lack: search all of them, newest first.
file(GLOB _batchai_cuda_roots LIST_DIRECTORIES TRUE /usr/local/cuda-*)
list(SORT _batchai_cuda_roots COMPARE NATURAL ORDER DESCENDING)
list(PREPEND _batchai_cuda_roots /usr/local/cuda)

if(_batchai_cuda_ok)
  if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND OR NOT CUDAToolkit_NVCC_EXECUTABLE)
    _batchai_cuda_missing("the CUDA toolkit (nvcc, cudart) was not found")
  elseif(NOT TARGET CUDA::cublas)
    _batchai_cuda_missing("cuBLAS was not found in the CUDA toolkit")
  endif()
endif()

if(_batchai_cuda_ok)
  set(_batchai_cuda_hints ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_DIR} $ENV{CUDNN_ROOT} $ENV{NCCL_ROOT}
      ${CUDNN_ROOT} ${NCCL_ROOT} ${_batchai_cuda_roots})
  find_path(BATCHAI_CUDNN_INCLUDE_DIR cudnn.h HINTS ${_batchai_cuda_hints} PATH_SUFFIXES include)
  find_library(BATCHAI_CUDNN_LIBRARY cudnn HINTS ${_batchai_cuda_hints} PATH_SUFFIXES lib64 lib)
  find_path(BATCHAI_NCCL_INCLUDE_DIR nccl.h HINTS ${_batchai_cuda_hints} PATH_SUFFIXES include)
  find_library(BATCHAI_NCCL_LIBRARY nccl HINTS ${_batchai_cuda_hints} PATH_SUFFIXES lib64 lib)
  if(NOT BATCHAI_CUDNN_INCLUDE_DIR OR NOT BATCHAI_CUDNN_LIBRARY)
    _batchai_cuda_missing("cuDNN (cudnn.h, libcudnn) was not found")
  elseif(NOT BATCHAI_NCCL_INCLUDE_DIR OR NOT BATCHAI_NCCL_LIBRARY)
    _batchai_cuda_missing("NCCL (nccl.h, libnccl) was not found")
  else()
    file(STRINGS ${BATCHAI_CUDNN_INCLUDE_DIR}/cudnn_version.h _batchai_cudnn_major
         REGEX "^#define CUDNN_MAJOR [0-9]+")
    string(REGEX MATCH "[0-9]+" _batchai_cudnn_major "${_batchai_cudnn_major}")
    if(_batchai_cudnn_major AND _batchai_cudnn_major LESS 9)
      _batchai_cuda_missing("cuDNN ${_batchai_cudnn_major} was found, 9 or newer is needed")
    endif()
  endif()
endif()

if(_batchai_cuda_ok)
  # sm_80/86 (A100, RTX 30), sm_90 (H100/H200) as SASS, plus compute_90 PTX that newer GPUs JIT.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80-real;86-real;90-real;90-virtual")
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(NOT CMAKE_CUDA_HOST_COMPILER)
    set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
  endif()
  enable_language(CUDA)
  # CMake 3.25 knows no CUDA20 dialect for nvcc; the .cu files need only C++17.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)

  add_library(batchai_cudnn INTERFACE IMPORTED GLOBAL)
  target_include_directories(batchai_cudnn SYSTEM INTERFACE ${BATCHAI_CUDNN_INCLUDE_DIR})
  target_link_libraries(batchai_cudnn INTERFACE ${BATCHAI_CUDNN_LIBRARY})
  add_library(batchai_nccl INTERFACE IMPORTED GLOBAL)
  target_include_directories(batchai_nccl SYSTEM INTERFACE ${BATCHAI_NCCL_INCLUDE_DIR})
  target_link_libraries(batchai_nccl INTERFACE ${BATCHAI_NCCL_LIBRARY})

  set(BATCHAI_CUDA_ENABLED TRUE)
  message(STATUS "CUDA backend: CUDA ${CUDAToolkit_VERSION}, cuDNN ${_batchai_cudnn_major} "
                 "(${BATCHAI_CUDNN_LIBRARY}), NCCL (${BATCHAI_NCCL_LIBRARY}), "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
