#include "error_answer.hpp"

#include <exception>
#include <new>

#include "batchai/common/errors.hpp"
#include "batchai/common/utf8.hpp"

namespace batchai::serve {
namespace {

ErrorAnswer from_error(const Error& e, int status, ErrorKind kind) {
  // "Error" is the CLI's code for failures without a service code: the door names those.
  return {status, kind, e.code() == "Error" ? "" : e.code(), e.what()};
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

ErrorAnswer error_answer_from_current_exception() {
  try {
    throw;
  } catch (const AnswerError& e) {
    return {e.status, ErrorKind::kAnswered, e.code, e.what()};
  } catch (const NotFound& e) {
    return from_error(e, 404, ErrorKind::kNotFound);
  } catch (const AlreadyExists& e) {
    return from_error(e, 409, ErrorKind::kAlreadyExists);
  } catch (const Conflict& e) {
    return from_error(e, 409, ErrorKind::kConflict);
  } catch (const InvalidArgument& e) {
    if (e.code() == "InvalidRange") return from_error(e, 416, ErrorKind::kInvalidRange);
    return from_error(e, 400, ErrorKind::kInvalid);
  } catch (const UsageError& e) {
    return from_error(e, 400, ErrorKind::kInvalid);
  } catch (const Error& e) {
    return from_error(e, 500, ErrorKind::kInternal);
  } catch (const Json::exception& e) {
    return {400, ErrorKind::kInvalid, "InvalidRequestContent",
            "The request content was invalid: " + json_error_text(e) + "."};
  } catch (const std::bad_alloc&) {
    return {500, ErrorKind::kInternal, "", "The server ran out of memory."};
  } catch (const std::exception& e) {
    return {500, ErrorKind::kInternal, "", e.what()};
  } catch (...) {
    return {500, ErrorKind::kInternal, "", "The server failed with an unknown error."};
  }
}

const char* gateway_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound: return "ResourceNotFound";
    case ErrorKind::kAlreadyExists:
    case ErrorKind::kConflict: return "Conflict";
    case ErrorKind::kInvalid:
    case ErrorKind::kInvalidRange:
    case ErrorKind::kMalformedHttp: return "BadRequest";
    case ErrorKind::kBodyTooLarge: return "RequestEntityTooLarge";
    case ErrorKind::kUriTooLong: return "RequestUriTooLong";
    case ErrorKind::kHeadersTooLarge: return "RequestHeaderFieldsTooLarge";
    case ErrorKind::kBusy: return "ServerBusy";
    case ErrorKind::kDiskFull: return "InsufficientStorage";
    case ErrorKind::kInternal:
    case ErrorKind::kAnswered: break;
  }
  return "InternalServerError";
}

Json json_error_body(const std::string& code, const std::string& message) {
  return {{"error", {{"code", to_valid_utf8(code)}, {"message", to_valid_utf8(message)}}}};
}

void reply_json_error(HttpResponse& res, int status, const std::string& code, const std::string& message) {
  res.status = status;
  res.set_header("x-ms-failure-cause", "gateway");
  res.set_content(json_error_body(code, message).dump(), "application/json; charset=utf-8");
}

ErrorAnswer transport_refusal(int status, const HttpLimits& limits) {
  ErrorAnswer a{status, ErrorKind::kInternal, "", "The request could not be served.", true};
  switch (status) {
    case 400:
      a.kind = ErrorKind::kMalformedHttp;
      a.message = "The request is not well-formed HTTP.";
      break;
    case 413:
      a.kind = ErrorKind::kBodyTooLarge;
      a.message = "The request body is larger than the server accepts (" + mib(limits.max_body_bytes) + "; " +
                  mib(limits.max_put_blob_bytes) + " for a Put Blob).";
      break;
    case 414:
      a.kind = ErrorKind::kUriTooLong;
      a.message = "The request URI is longer than " + std::to_string(limits.max_target_bytes) + " bytes.";
      break;
    case 431:
      a.kind = ErrorKind::kHeadersTooLarge;
      a.message = "The request's header fields are larger than " + std::to_string(limits.max_header_bytes / 1024) +
                  " KiB.";
      break;
    case 503:
      a.kind = ErrorKind::kBusy;
      a.message = "The server is busy: try again in a second.";
      break;
    case 507:
      a.kind = ErrorKind::kDiskFull;
      a.message =
          "The server's disk is full: the body could not be stored. Free space where BATCHAI_HOME is, then send it "
          "again.";
      break;
    default:
      break;
  }
  return a;
}

}  // namespace batchai::serve
