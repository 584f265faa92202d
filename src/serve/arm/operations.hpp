// Long-running operations as ARM answers them (docs/serve.md "Long-running operations"). The
// control plane finishes every create and delete before the answer, so an operation is born
// Succeeded; it is remembered (bounded, oldest forgotten first) only so that the client's polls of
// Azure-AsyncOperation / Location find it. Retry-After: 1 keeps azure-core's polls at 1 s
// (it reads 0 as absent and waits 30 s).
#pragma once
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "arm/call.hpp"

namespace batchai::serve {

class Operations {
 public:
  static constexpr std::size_t kMaxRemembered = 10000;

  // Answers 202 for the finished operation of `call` (a PUT, DELETE or POST of provider `ns`):
  // Location always, Azure-AsyncOperation too when `async_header`.
  void accepted(Call& call, const std::string& ns, bool async_header);
  // GET .../providers/{ns}/locations/{loc}/operationStatuses|operationResults/{id}.
  void poll(Call& call, bool status_kind, const std::string& id);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> started_;  // id -> start time
  std::deque<std::string> order_;
};

}  // namespace batchai::serve
