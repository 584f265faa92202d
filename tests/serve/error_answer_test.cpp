// The one exception map of `batchai serve` (error_answer.hpp): each typed error's status and kind,
// the service's code kept and the CLI's generic "Error" left for the door to name, and a word for
// every kind in each door's vocabulary (ARM's and Storage's).
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "batchai/common/errors.hpp"
#include "error_answer.hpp"
#include "storage/byte_reply.hpp"

namespace batchai::serve {
namespace {

template <typename Throw>
ErrorAnswer answer_for(Throw thrower) {
  try {
    thrower();
  } catch (...) {
    return error_answer_from_current_exception();
  }
  ADD_FAILURE() << "nothing was thrown";
  return {};
}

TEST(ErrorAnswer, TypedErrorsMapToOneStatusEach) {
  struct Case {
    ErrorAnswer got;
    int status;
    ErrorKind kind;
    const char* code;
  };
  const Case cases[] = {
      {answer_for([] { throw NotFound("gone", "JobNotFound"); }), 404, ErrorKind::kNotFound, "JobNotFound"},
      {answer_for([] { throw NotFound("gone"); }), 404, ErrorKind::kNotFound, ""},
      {answer_for([] { throw AlreadyExists("there"); }), 409, ErrorKind::kAlreadyExists, ""},
      {answer_for([] { throw Conflict("busy", "ClusterBusy"); }), 409, ErrorKind::kConflict, "ClusterBusy"},
      {answer_for([] { throw InvalidArgument("bad"); }), 400, ErrorKind::kInvalid, ""},
      {answer_for([] { throw InvalidArgument("past the end", "InvalidRange"); }), 416, ErrorKind::kInvalidRange,
       "InvalidRange"},
      {answer_for([] { throw UsageError("usage"); }), 400, ErrorKind::kInvalid, ""},
      {answer_for([] { throw SystemError("disk"); }), 500, ErrorKind::kInternal, ""},
      {answer_for([] { const Json j = Json::parse("{"); }), 400, ErrorKind::kInvalid, "InvalidRequestContent"},
      {answer_for([] { throw std::bad_alloc(); }), 500, ErrorKind::kInternal, ""},
      {answer_for([] { throw std::runtime_error("odd"); }), 500, ErrorKind::kInternal, ""},
      {answer_for([] { throw 7; }), 500, ErrorKind::kInternal, ""},
      {answer_for([] { throw AnswerError(401, "LoginRequired", "log in"); }), 401, ErrorKind::kAnswered,
       "LoginRequired"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.got.status, c.status) << c.got.message;
    EXPECT_EQ(c.got.kind, c.kind) << c.got.message;
    EXPECT_EQ(c.got.code, c.code) << c.got.message;
    EXPECT_FALSE(c.got.message.empty());
    EXPECT_FALSE(c.got.from_transport);
  }
}

TEST(ErrorAnswer, TransportRefusalsNameTheirLimit) {
  HttpLimits limits;
  EXPECT_EQ(transport_refusal(413, limits).kind, ErrorKind::kBodyTooLarge);
  EXPECT_NE(transport_refusal(413, limits).message.find("4 MiB"), std::string::npos);
  EXPECT_NE(transport_refusal(414, limits).message.find("8192"), std::string::npos);
  EXPECT_EQ(transport_refusal(431, limits).kind, ErrorKind::kHeadersTooLarge);
  EXPECT_EQ(transport_refusal(503, limits).kind, ErrorKind::kBusy);
  EXPECT_EQ(transport_refusal(507, limits).kind, ErrorKind::kDiskFull);
  EXPECT_TRUE(transport_refusal(400, limits).from_transport);
  EXPECT_EQ(transport_refusal(599, limits).status, 599);
}

TEST(ErrorAnswer, EachDoorHasAWordForEachKind) {
  EXPECT_STREQ(gateway_code(ErrorKind::kNotFound), "ResourceNotFound");
  EXPECT_STREQ(storage_code(ErrorKind::kNotFound), "ResourceNotFound");
  EXPECT_STREQ(gateway_code(ErrorKind::kAlreadyExists), "Conflict");
  EXPECT_STREQ(storage_code(ErrorKind::kAlreadyExists), "ResourceAlreadyExists");
  EXPECT_STREQ(gateway_code(ErrorKind::kBodyTooLarge), "RequestEntityTooLarge");
  EXPECT_STREQ(storage_code(ErrorKind::kBodyTooLarge), "RequestBodyTooLarge");
  EXPECT_STREQ(gateway_code(ErrorKind::kInternal), "InternalServerError");
  EXPECT_STREQ(storage_code(ErrorKind::kInternal), "InternalError");
  // A client's bytes in a message never make the JSON unwritable.
  EXPECT_NO_THROW(json_error_body("Code", std::string("bad \xff byte")).dump());
}

}  // namespace
}  // namespace batchai::serve
