// Signature checks of the built-in functions: arity at compile time (the parser), argument types
// at run time (the evaluator).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "functions.hpp"

namespace batchai::query::detail {

// Empty when `count` arguments fit the signature, else a sentence saying what is expected.
std::string check_arity(const FunctionSpec& spec, std::size_t count);

// Throws QueryError(kInvalidType) when an argument does not match the signature.
void check_types(const FunctionSpec& spec, const Node& call, const std::vector<Arg>& args);

}  // namespace batchai::query::detail
