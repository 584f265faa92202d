// Typed errors shared by every module. Each carries a message meant for the user (what happened
// and what to do); only the executable's main() turns them into exit codes (see exit_code()).
#pragma once
#include <stdexcept>
#include <string>

namespace batchai {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string code = "Error")
      : std::runtime_error(message), code_(std::move(code)) {}
  // Service-style error code, e.g. "JobNotFound"; "Error" for generic CLI-side failures.
  const std::string& code() const { return code_; }
  // Process exit code the CLI reports for this error (docs/output.md §2.5).
  virtual int exit_code() const { return 1; }

 private:
  std::string code_;
};

// CLI-side validation failure of a value the user gave (exit 1).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Command-line parsing error: unknown option, missing required option, bad enum (exit 2).
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

// A named resource does not exist. `show` commands report exit 3, others exit 1.
class NotFound : public Error {
 public:
  using Error::Error;
};

class AlreadyExists : public Error {
 public:
  using Error::Error;
};

// The operation is not allowed in the resource's current state.
class Conflict : public Error {
 public:
  using Error::Error;
};

// The user declined (or could not be asked for) a confirmation.
class Cancelled : public Error {
 public:
  using Error::Error;
};

// An operating-system or storage failure that is not the user's fault.
class SystemError : public Error {
 public:
  using Error::Error;
};

}  // namespace batchai
