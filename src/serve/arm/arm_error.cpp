#include "arm/arm_error.hpp"

#include <exception>
#include <new>

#include "batchai/common/errors.hpp"

namespace batchai::serve {
namespace {

ArmError from_error(const Error& e, int status, const char* generic_code) {
  // "Error" is the CLI's code for failures without a service code: give ARM's generic one.
  return {status, e.code() == "Error" ? generic_code : e.code(), e.what()};
}

}  // namespace

ArmError arm_error_from_current_exception() {
  try {
    throw;
  } catch (const NotFound& e) {
    return from_error(e, 404, "ResourceNotFound");
  } catch (const AlreadyExists& e) {
    return from_error(e, 409, "Conflict");
  } catch (const Conflict& e) {
    return from_error(e, 409, "Conflict");
  } catch (const InvalidArgument& e) {
    return from_error(e, 400, "BadRequest");
  } catch (const UsageError& e) {
    return from_error(e, 400, "BadRequest");
  } catch (const Error& e) {
    return from_error(e, 500, "InternalServerError");
  } catch (const Json::exception& e) {
    return {400, "InvalidRequestContent", "The request content was invalid: " + json_error_text(e) + "."};
  } catch (const std::bad_alloc&) {
    return {500, "InternalServerError", "The server ran out of memory."};
  } catch (const std::exception& e) {
    return {500, "InternalServerError", e.what()};
  } catch (...) {
    return {500, "InternalServerError", "The server failed with an unknown error."};
  }
}

}  // namespace batchai::serve
