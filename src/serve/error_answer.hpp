// The one mapping from what went wrong to an HTTP status in `batchai serve` (docs/serve.md
// "Errors"): an exception a route threw, or a refusal of the transport itself, becomes an
// ErrorAnswer; each door then renders it in its API's shape (ARM's JSON, Storage's XML, the
// dashboard's JSON) with the service's own code where it has one and the door's word otherwise.
#pragma once
#include <stdexcept>
#include <string>

#include "batchai/common/json_util.hpp"
#include "batchai/serve/http_limits.hpp"
#include "http/http_message.hpp"

namespace batchai::serve {

// What went wrong, as the doors' vocabularies tell it apart (each door has a word for each).
enum class ErrorKind {
  kNotFound,       // 404
  kAlreadyExists,  // 409
  kConflict,       // 409
  kInvalid,        // 400: a name, a value or a body the service refused
  kInvalidRange,   // 416: a Range that does not fit the file
  kInternal,       // 500
  kAnswered,       // a door's own status and code (AnswerError)
  // Refusals of the transport (http/http_server.hpp), before any route ran:
  kMalformedHttp,    // 400
  kBodyTooLarge,     // 413
  kUriTooLong,       // 414
  kHeadersTooLarge,  // 431
  kBusy,             // 503
  kDiskFull,         // 507
};

struct ErrorAnswer {
  int status = 500;
  ErrorKind kind = ErrorKind::kInternal;
  std::string code;  // the service's own ("JobNotFound"); empty: the door names it
  std::string message;
  bool from_transport = false;  // refused by the transport or before the routes (ARM: x-ms-failure-cause)
};

// A door's answer other than 200 with its own status and code, thrown from deep in its routes.
struct AnswerError : std::runtime_error {
  AnswerError(int s, std::string c, const std::string& m) : std::runtime_error(m), status(s), code(std::move(c)) {}
  int status;
  std::string code;
};

// The answer for the exception being handled (call inside a catch block); never throws.
ErrorAnswer error_answer_from_current_exception();
// ARM's word for each kind, which the dashboard and the transport's refusals use too.
const char* gateway_code(ErrorKind kind);
// {"error":{"code","message"}}, both made valid UTF-8 (messages quote what the client sent).
Json json_error_body(const std::string& code, const std::string& message);

// ARM's error answer, which the transport's refusals take too: `status`, x-ms-failure-cause:
// gateway and json_error_body.
void reply_json_error(HttpResponse& res, int status, const std::string& code, const std::string& message);

// The answer for a refusal of the transport (400, 413, 414, 431, 503, 507; others: 500).
ErrorAnswer transport_refusal(int status, const HttpLimits& limits);

}  // namespace batchai::serve
