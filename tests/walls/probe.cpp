// One include, named by the test that builds this file (tests/walls/CMakeLists.txt): it compiles
// with a module's own view of the headers exactly when the module may use that header.
#include BATCHAI_WALL_PROBE_HEADER

int batchai_wall_probe() { return 0; }
