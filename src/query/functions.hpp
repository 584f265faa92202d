// The built-in JMESPath functions (abs ... values): their signatures and implementations. The
// checks of those signatures are in function_checks.hpp.
#pragma once
#include <string_view>
#include <vector>

#include "evaluator.hpp"

namespace batchai::query::detail {

// Argument type bits of a function signature.
enum ArgType : unsigned {
  kTypeNumber = 1U << 0U,
  kTypeString = 1U << 1U,
  kTypeBoolean = 1U << 2U,
  kTypeArray = 1U << 3U,
  kTypeObject = 1U << 4U,
  kTypeNull = 1U << 5U,
  kTypeExpref = 1U << 6U,
  kTypeArrayNumber = 1U << 7U,
  kTypeArrayString = 1U << 8U,
  kTypeAny = kTypeNumber | kTypeString | kTypeBoolean | kTypeArray | kTypeObject | kTypeNull,
};

// One evaluated argument: a value, or the expression of an `&expr` argument.
struct Arg {
  Value value;
  const Node* expref = nullptr;
};

using FunctionImpl = Value (*)(Evaluator& evaluator, const Node& call, std::vector<Arg>& args);

struct FunctionSpec {
  std::string_view name;
  std::vector<unsigned> params;  // allowed ArgType bits per parameter
  bool variadic = false;         // the last parameter repeats (at least once)
  FunctionImpl impl = nullptr;
};

// nullptr for an unknown name.
const FunctionSpec* find_function(std::string_view name);

}  // namespace batchai::query::detail
