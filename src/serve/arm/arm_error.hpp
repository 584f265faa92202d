// ARM error answers: {"error":{"code","message"}} with the status the error's kind maps to
// (NotFound 404, AlreadyExists 409, InvalidArgument/UsageError 400, Conflict 409, others 500),
// keeping the service's own codes and messages.
#pragma once
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/common/utf8.hpp"

namespace batchai::serve {

struct ArmError {
  int status = 500;
  std::string code;
  std::string message;
  // Messages quote what the client sent (a name from the URL may be any bytes): made valid
  // UTF-8 here, or writing the JSON would fail and turn a 400 into a 500.
  Json body() const { return {{"error", {{"code", to_valid_utf8(code)}, {"message", to_valid_utf8(message)}}}}; }
};

// The answer for the exception being handled (call inside a catch block).
ArmError arm_error_from_current_exception();

}  // namespace batchai::serve
