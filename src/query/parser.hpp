// Pratt parser for JMESPath: tokens -> syntax tree, with the reference implementation's binding
// powers and projection-stopping rule. Function names and arities are resolved here.
#pragma once
#include <string_view>

#include "ast.hpp"

namespace batchai::query::detail {

// Throws QueryError: kSyntax for malformed text (including nesting deeper than kMaxDepth), then
// kUnknownFunction, kInvalidArity or kInvalidValue (slice step 0) for a well-formed expression
// that can never evaluate.
NodePtr parse(std::string_view expression);

}  // namespace batchai::query::detail
