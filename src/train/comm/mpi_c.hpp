// Includes MPI's C API only. Open MPI's mpi.h otherwise pulls in its deprecated C++ bindings
// when compiled as C++, which then need libmpi_cxx at link time (MPI::MPI_C does not link it).
#pragma once
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
