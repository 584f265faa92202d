// Entry point of the `batchai` executable.
#include "app.hpp"

int main(int argc, char** argv) { return batchai::cli::run(argc, argv); }
