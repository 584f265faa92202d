// JMESPath tokeniser (see lexer.hpp). Mirrors the reference implementation's lexer, including
// the legacy rule that a backtick literal which is not valid JSON is read as a JSON string.
#include "lexer.hpp"

#include <charconv>

#include "batchai/common/json_util.hpp"
#include "json_util.hpp"

namespace batchai::query::detail {
namespace {

// Deepest JSON literal accepted, as for JSON files: copies and comparisons of a value recurse.
constexpr std::size_t kMaxLiteralDepth = 64;

bool is_identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_identifier_char(char c) { return is_identifier_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Tokens run() {
    auto& tokens = out_.tokens;
    tokens.reserve(text_.size() / 3 + 4);  // typical density; grows for denser text
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (is_space(c)) {
        ++pos_;
        continue;
      }
      Token token;
      token.start = pos_;
      lex_one(c, token);
      token.length = pos_ - token.start;
      tokens.push_back(std::move(token));
    }
    Token eof;
    eof.start = text_.size();
    tokens.push_back(std::move(eof));
    return std::move(out_);
  }

 private:
  // Two-character operators: `second` follows `first` -> `two`, otherwise `one`.
  void pick(Token& token, char second, TokenType two, TokenType one) {
    ++pos_;
    if (pos_ < text_.size() && text_[pos_] == second) {
      ++pos_;
      token.type = two;
    } else {
      token.type = one;
    }
  }

  void lex_one(char c, Token& token) {
    switch (c) {
      case '.': ++pos_; token.type = TokenType::kDot; return;
      case '*': ++pos_; token.type = TokenType::kStar; return;
      case ']': ++pos_; token.type = TokenType::kRbracket; return;
      case ',': ++pos_; token.type = TokenType::kComma; return;
      case ':': ++pos_; token.type = TokenType::kColon; return;
      case '@': ++pos_; token.type = TokenType::kCurrent; return;
      case '(': ++pos_; token.type = TokenType::kLparen; return;
      case ')': ++pos_; token.type = TokenType::kRparen; return;
      case '{': ++pos_; token.type = TokenType::kLbrace; return;
      case '}': ++pos_; token.type = TokenType::kRbrace; return;
      case '|': pick(token, '|', TokenType::kOr, TokenType::kPipe); return;
      case '&': pick(token, '&', TokenType::kAnd, TokenType::kExpref); return;
      case '<': pick(token, '=', TokenType::kLte, TokenType::kLt); return;
      case '>': pick(token, '=', TokenType::kGte, TokenType::kGt); return;
      case '!': pick(token, '=', TokenType::kNe, TokenType::kNot); return;
      case '[': lex_bracket(token); return;
      case '=':
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
          pos_ += 2;
          token.type = TokenType::kEq;
          return;
        }
        throw_syntax(pos_, "unexpected '=' (use '==' to compare values)");
      case '\'': lex_raw_string(token); return;
      case '"': lex_quoted_identifier(token); return;
      case '`': lex_literal(token); return;
      default: break;
    }
    if (is_identifier_start(c)) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && is_identifier_char(text_[pos_])) ++pos_;
      token.type = TokenType::kUnquotedIdentifier;
      token.text.assign(text_.substr(start, pos_ - start));
      return;
    }
    if (is_digit(c) || c == '-') {
      lex_number(token);
      return;
    }
    throw_syntax(pos_, "unexpected character '" + std::string(1, c) + "'");
  }

  void lex_bracket(Token& token) {
    ++pos_;
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      token.type = TokenType::kFlatten;
    } else if (pos_ < text_.size() && text_[pos_] == '?') {
      ++pos_;
      token.type = TokenType::kFilter;
    } else {
      token.type = TokenType::kLbracket;
    }
  }

  void lex_number(Token& token) {
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ - start == 1 && text_[start] == '-') throw_syntax(start, "'-' must be followed by digits");
    const auto res = std::from_chars(text_.data() + start, text_.data() + pos_, token.number);
    if (res.ec != std::errc()) {
      throw_syntax(start, "number '" + std::string(text_.substr(start, pos_ - start)) + "' is out of range");
    }
    token.type = TokenType::kNumber;
  }

  // Text up to the closing delimiter; a backslash keeps itself and the next character.
  std::string consume_until(char delimiter) {
    const std::size_t start = pos_;
    std::string buffer;
    ++pos_;
    while (true) {
      if (pos_ >= text_.size()) {
        throw_syntax(start, std::string("unclosed ") + delimiter + " delimiter (missing closing " + delimiter + ")");
      }
      char c = text_[pos_];
      if (c == delimiter) break;
      if (c == '\\') {
        buffer += '\\';
        ++pos_;
        if (pos_ >= text_.size()) continue;  // reported as unclosed above
        c = text_[pos_];
      }
      buffer += c;
      ++pos_;
    }
    ++pos_;  // closing delimiter
    return buffer;
  }

  void lex_raw_string(Token& token) {
    std::string lexeme = consume_until('\'');
    replace_all(lexeme, "\\'", "'");
    add_literal(token, Json(std::move(lexeme)));
  }

  void lex_quoted_identifier(Token& token) {
    const std::size_t start = pos_;
    const std::string lexeme = "\"" + consume_until('"') + "\"";
    Json parsed = Json::parse(lexeme, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_string()) {
      throw_syntax(start, "invalid quoted identifier " + lexeme + " (it must be a valid JSON string)");
    }
    token.type = TokenType::kQuotedIdentifier;
    token.text = std::move(parsed.get_ref<std::string&>());
  }

  void lex_literal(Token& token) {
    const std::size_t start = pos_;
    std::string lexeme = consume_until('`');
    replace_all(lexeme, "\\`", "`");
    if (auto at = batchai::excess_nesting(lexeme, kMaxLiteralDepth)) {
      throw_syntax(start + *at, "the JSON literal nests more than " + std::to_string(kMaxLiteralDepth) +
                                    " levels deep; simplify it");
    }
    Json parsed = Json::parse(lexeme, nullptr, false);
    if (parsed.is_discarded()) {
      // Legacy (pre JEP-12) behaviour: `foo` means the string "foo".
      const std::size_t first = lexeme.find_first_not_of(" \t\n\r");
      const std::string legacy = "\"" + (first == std::string::npos ? std::string() : lexeme.substr(first)) + "\"";
      parsed = Json::parse(legacy, nullptr, false);
      if (parsed.is_discarded()) throw_syntax(start, "invalid JSON literal `" + lexeme + "`");
    }
    add_literal(token, std::move(parsed));
  }

  void add_literal(Token& token, Json value) {
    token.type = TokenType::kLiteral;
    token.literal = out_.literals.size();
    out_.literals.push_back(std::move(value));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  Tokens out_;
};

}  // namespace

void throw_syntax(std::size_t position, const std::string& detail) {
  throw QueryError(ErrorKind::kSyntax, position,
                   "Invalid JMESPath expression at position " + std::to_string(position) + ": " + detail);
}

std::string describe(const Token& token, std::string_view expression) {
  if (token.type == TokenType::kEof) return "end of expression";
  std::string text(expression.substr(token.start, token.length));
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return "token '" + text + "'";
}

Tokens tokenize(std::string_view expression) { return Lexer(expression).run(); }

}  // namespace batchai::query::detail
