// JMESPath (https://jmespath.org/specification.html) over nlohmann::ordered_json: the engine
// behind every command's --query. ordered_json keeps multiselect-hash keys in expression order,
// which `-o table` and `-o tsv` use for their columns.
#pragma once
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace batchai::query {

using Json = nlohmann::ordered_json;

enum class ErrorKind { kSyntax, kInvalidType, kInvalidValue, kInvalidArity, kUnknownFunction };

// "syntax", "invalid-type", "invalid-value", "invalid-arity", "unknown-function" (the
// compliance suite's names).
const char* to_string(ErrorKind kind);

class QueryError : public std::runtime_error {
 public:
  QueryError(ErrorKind kind, std::size_t position, const std::string& message);
  ErrorKind kind() const { return kind_; }
  // 0-based offset into the expression where the problem was found.
  std::size_t position() const { return position_; }

 private:
  ErrorKind kind_;
  std::size_t position_;
};

class Expression {
 public:
  // Throws QueryError (kind kSyntax, or kUnknownFunction/kInvalidArity/kInvalidValue (slice
  // step 0) when detectable early; a syntax error anywhere in the text wins over those).
  static Expression compile(std::string_view text);
  // Throws QueryError for run-time type/value/arity errors.
  Json evaluate(const Json& data) const;

  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;
  ~Expression();

  struct Node;

 private:
  explicit Expression(std::unique_ptr<Node> root);
  std::unique_ptr<Node> root_;
};

// compile(expression).evaluate(data).
Json search(std::string_view expression, const Json& data);

}  // namespace batchai::query
