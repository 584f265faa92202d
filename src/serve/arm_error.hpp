// ARM error answers: {"error":{"code","message"}} with the status the error's kind maps to
// (NotFound 404, AlreadyExists 409, InvalidArgument/UsageError 400, Conflict 409, others 500),
// keeping the service's own codes and messages.
#pragma once
#include <string>

#include "batchai/common/json_util.hpp"

namespace batchai::serve {

struct ArmError {
  int status = 500;
  std::string code;
  std::string message;
  Json body() const { return {{"error", {{"code", code}, {"message", message}}}}; }
};

// The answer for the exception being handled (call inside a catch block).
ArmError arm_error_from_current_exception();

}  // namespace batchai::serve
