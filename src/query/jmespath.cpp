// Public entry points of the JMESPath engine: QueryError, Expression::compile/evaluate, search().
#include "batchai/query/jmespath.hpp"

#include "ast.hpp"
#include "budget.hpp"
#include "evaluator.hpp"
#include "parser.hpp"

namespace batchai::query {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kSyntax: return "syntax";
    case ErrorKind::kInvalidType: return "invalid-type";
    case ErrorKind::kInvalidValue: return "invalid-value";
    case ErrorKind::kInvalidArity: return "invalid-arity";
    case ErrorKind::kUnknownFunction: return "unknown-function";
  }
  return "syntax";
}

QueryError::QueryError(ErrorKind kind, std::size_t position, const std::string& message)
    : std::runtime_error(message), kind_(kind), position_(position) {}

Expression::Expression(std::unique_ptr<Node> root) : root_(std::move(root)) {}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::~Expression() = default;

Expression Expression::compile(std::string_view text) { return Expression(detail::parse(text)); }

Json Expression::evaluate(const Json& data) const {
  const detail::BudgetScope budget;
  detail::Evaluator evaluator;
  return evaluator.eval(*root_, detail::Value::borrow(data)).take();
}

Json search(std::string_view expression, const Json& data) { return Expression::compile(expression).evaluate(data); }

}  // namespace batchai::query
