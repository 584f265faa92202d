// Tokeniser for JMESPath expressions: turns the text into tokens with their 0-based offsets.
// Literals (`json`), raw strings ('text') and quoted identifiers ("json string") are decoded here.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "batchai/query/jmespath.hpp"

namespace batchai::query::detail {

enum class TokenType {
  kEof,
  kUnquotedIdentifier,
  kQuotedIdentifier,
  kLiteral,
  kRbracket,
  kRparen,
  kComma,
  kRbrace,
  kNumber,
  kCurrent,
  kExpref,
  kColon,
  kPipe,
  kOr,
  kAnd,
  kEq,
  kGt,
  kLt,
  kGte,
  kLte,
  kNe,
  kFlatten,
  kStar,
  kFilter,
  kDot,
  kNot,
  kLbrace,
  kLbracket,
  kLparen,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::size_t start = 0;
  std::size_t length = 0;
  std::string text;          // identifier name
  std::size_t literal = 0;   // index into Tokens::literals for kLiteral
  std::int64_t number = 0;
};

struct Tokens {
  std::vector<Token> tokens;  // ends with kEof
  std::vector<Json> literals; // values of backtick literals and raw strings, kept apart so tokens stay small
};

// How a token reads in an error message, e.g. "']'" or "end of expression".
std::string describe(const Token& token, std::string_view expression);

// Throws QueryError(kSyntax) with the offending position on malformed input.
Tokens tokenize(std::string_view expression);

// "Invalid JMESPath expression at position N: <detail>".
[[noreturn]] void throw_syntax(std::size_t position, const std::string& detail);

}  // namespace batchai::query::detail
