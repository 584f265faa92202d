// The one rule of a plugin's entry (the trainer's, the server's): no exception crosses the
// plugin's boundary. An error becomes the plain struct the executable reads back (fields
// thrown, exit_code, code, message) and turns into a batchai::Error again.
#pragma once
#include <exception>
#include <new>
#include <string>

#include "batchai/common/errors.hpp"

namespace batchai {

// Runs `body` (returning the exit code); `what` names the work in messages ("the training").
template <typename PluginError, typename Body>
int run_guarded(PluginError& error, const std::string& what, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    error = {true, e.exit_code(), e.code(), e.what()};
  } catch (const std::bad_alloc&) {
    error = {true, 1, "Error", "Out of memory: " + what + " needed more memory than this machine could give."};
  } catch (const std::exception& e) {
    error = {true, 1, "Error", e.what()};
  } catch (...) {
    error = {true, 1, "Error", what + " failed with an unknown exception"};
  }
  return error.exit_code;
}

}  // namespace batchai
