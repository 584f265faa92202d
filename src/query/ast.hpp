// The JMESPath syntax tree shared by the parser, the evaluator and the function table.
// Chains (a.b.c, a[0][1]) are flattened into one node so evaluation depth stays small.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batchai/query/jmespath.hpp"

namespace batchai::query::detail {

struct FunctionSpec;

enum class NodeKind {
  kField,             // name
  kSubexpression,     // children evaluated in turn, each on the previous result
  kIndexExpression,   // same, for [n] chains
  kIndex,             // index
  kSlice,             // slice[0..2]
  kProjection,        // children: left, right (list projection, also [] and slices)
  kValueProjection,   // children: left, right (object values: *)
  kFilterProjection,  // children: left, right, condition
  kFlatten,           // children: child
  kIdentity,          // the current node (also `@`)
  kLiteral,           // literal
  kComparator,        // children: left, right; op
  kNot,               // children: child
  kAnd,               // children: left, right
  kOr,                // children: left, right
  kPipe,              // children: left, right
  kMultiSelectList,   // children
  kMultiSelectHash,   // keys[i] -> children[i]
  kFunction,          // name, function, children = arguments
  kExpref,            // children: child
};

enum class Comparator { kEq, kNe, kLt, kLte, kGt, kGte };

// Deepest tree the parser builds; deeper expressions are rejected as syntax errors so that
// neither the parser, the evaluator nor the destructor can exhaust the stack.
inline constexpr std::size_t kMaxDepth = 512;

}  // namespace batchai::query::detail

namespace batchai::query {

struct Expression::Node {
  detail::NodeKind kind = detail::NodeKind::kIdentity;
  std::size_t position = 0;  // offset of the token that produced the node
  std::size_t depth = 1;     // height of the subtree
  std::vector<std::unique_ptr<Node>> children;
  std::string name;
  std::vector<std::string> keys;
  Json literal;
  std::int64_t index = 0;
  std::optional<std::int64_t> slice[3];
  detail::Comparator op = detail::Comparator::kEq;
  const detail::FunctionSpec* function = nullptr;
};

}  // namespace batchai::query

namespace batchai::query::detail {
using Node = Expression::Node;
using NodePtr = std::unique_ptr<Node>;
}  // namespace batchai::query::detail
