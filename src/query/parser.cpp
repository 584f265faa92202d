// Pratt parser for JMESPath (see parser.hpp). Structure follows jmespath.py's parser so that
// edge cases (projection stopping, dot right-hand sides, filters) behave like the reference.
#include "parser.hpp"

#include <algorithm>
#include <optional>

#include "function_checks.hpp"
#include "functions.hpp"
#include "lexer.hpp"

namespace batchai::query::detail {
namespace {

// Tokens whose binding power is below this end a projection's right-hand side.
constexpr int kProjectionStop = 10;

int binding_power(TokenType type) {
  switch (type) {
    case TokenType::kPipe: return 1;
    case TokenType::kOr: return 2;
    case TokenType::kAnd: return 3;
    case TokenType::kEq:
    case TokenType::kGt:
    case TokenType::kLt:
    case TokenType::kGte:
    case TokenType::kLte:
    case TokenType::kNe: return 5;
    case TokenType::kFlatten: return 9;
    case TokenType::kStar: return 20;
    case TokenType::kFilter: return 21;
    case TokenType::kDot: return 40;
    case TokenType::kNot: return 45;
    case TokenType::kLbrace: return 50;
    case TokenType::kLbracket: return 55;
    case TokenType::kLparen: return 60;
    default: return 0;
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexed_(tokenize(text)), tokens_(lexed_.tokens) {}

  NodePtr run() {
    NodePtr root = expression(0);
    if (current().type != TokenType::kEof) {
      fail(current(), "expected the end of the expression or an operator");
    }
    if (deferred_) throw *deferred_;
    return root;
  }

 private:
  const Token& current() const { return tokens_[index_]; }
  const Token& peek(std::size_t n) const { return tokens_[std::min(index_ + n, tokens_.size() - 1)]; }
  void advance() {
    if (index_ + 1 < tokens_.size()) ++index_;
  }

  [[noreturn]] void fail(const Token& token, const std::string& expected) const {
    throw_syntax(token.start, "unexpected " + describe(token, text_) + "; " + expected);
  }

  void match(TokenType type, const char* what) {
    if (current().type != type) fail(current(), std::string("expected ") + what);
    advance();
  }

  // Records the first semantic error; syntax errors found later still win, like the reference.
  void defer(ErrorKind kind, std::size_t position, const std::string& message) {
    if (!deferred_) deferred_.emplace(kind, position, message);
  }

  NodePtr make(NodeKind kind, std::size_t position) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->position = position;
    return node;
  }

  NodePtr add(NodePtr parent, NodePtr child) {
    parent->depth = std::max(parent->depth, child->depth + 1);
    if (parent->depth > kMaxDepth) {
      throw_syntax(parent->position, "the expression nests more than " + std::to_string(kMaxDepth) +
                                         " levels deep; simplify it");
    }
    parent->children.push_back(std::move(child));
    return parent;
  }

  NodePtr binary(NodeKind kind, std::size_t position, NodePtr left, NodePtr right) {
    NodePtr node = make(kind, position);
    node->children.reserve(kind == NodeKind::kFilterProjection ? 3 : 2);
    node = add(std::move(node), std::move(left));
    return add(std::move(node), std::move(right));
  }

  NodePtr identity(std::size_t position) { return make(NodeKind::kIdentity, position); }

  NodePtr expression(int rbp) {
    if (++nesting_ > kMaxDepth) {
      throw_syntax(current().start, "the expression nests more than " + std::to_string(kMaxDepth) +
                                        " levels deep; simplify it");
    }
    const Token& token = current();
    advance();
    NodePtr left = nud(token);
    while (rbp < binding_power(current().type)) {
      const Token& op = current();
      advance();
      left = led(op, std::move(left));
    }
    --nesting_;
    return left;
  }

  NodePtr nud(const Token& token) {
    switch (token.type) {
      case TokenType::kLiteral: {
        NodePtr node = make(NodeKind::kLiteral, token.start);
        node->literal = std::move(lexed_.literals[token.literal]);
        return node;
      }
      case TokenType::kUnquotedIdentifier: {
        NodePtr node = make(NodeKind::kField, token.start);
        node->name = token.text;
        return node;
      }
      case TokenType::kQuotedIdentifier: {
        if (current().type == TokenType::kLparen) {
          fail(current(), "a quoted identifier cannot be a function name");
        }
        NodePtr node = make(NodeKind::kField, token.start);
        node->name = token.text;
        return node;
      }
      case TokenType::kStar: {
        NodePtr right = current().type == TokenType::kRbracket ? identity(token.start)
                                                                : projection_rhs(binding_power(TokenType::kStar));
        return binary(NodeKind::kValueProjection, token.start, identity(token.start), std::move(right));
      }
      case TokenType::kFilter: return filter(token, identity(token.start));
      case TokenType::kLbrace: return multi_select_hash(token);
      case TokenType::kLparen: {
        NodePtr inner = expression(0);
        match(TokenType::kRparen, "')' to close the '('");
        return inner;
      }
      case TokenType::kFlatten: {
        NodePtr flat = add(make(NodeKind::kFlatten, token.start), identity(token.start));
        return binary(NodeKind::kProjection, token.start, std::move(flat),
                      projection_rhs(binding_power(TokenType::kFlatten)));
      }
      case TokenType::kNot:
        return add(make(NodeKind::kNot, token.start), expression(binding_power(TokenType::kNot)));
      case TokenType::kLbracket: {
        const TokenType next = current().type;
        if (next == TokenType::kNumber || next == TokenType::kColon) {
          return project_if_slice(token, identity(token.start), index_or_slice());
        }
        if (next == TokenType::kStar && peek(1).type == TokenType::kRbracket) {
          advance();
          advance();
          return binary(NodeKind::kProjection, token.start, identity(token.start),
                        projection_rhs(binding_power(TokenType::kStar)));
        }
        return multi_select_list(token);
      }
      case TokenType::kCurrent: return identity(token.start);
      case TokenType::kExpref: return add(make(NodeKind::kExpref, token.start), expression(0));
      case TokenType::kEof:
        throw_syntax(token.start, "the expression ends too early; something is missing at the end");
      default: fail(token, "expected an identifier, literal, '[', '{', '(', '@', '&', '!' or '*'");
    }
  }

  NodePtr led(const Token& token, NodePtr left) {
    switch (token.type) {
      case TokenType::kDot: {
        if (current().type == TokenType::kStar) {
          advance();
          // The star's binding power (not the dot's) so `a.*.b.c` projects `b.c`, as `a[*].b.c` does.
          NodePtr right = projection_rhs(binding_power(TokenType::kStar));
          return binary(NodeKind::kValueProjection, token.start, std::move(left), std::move(right));
        }
        NodePtr right = dot_rhs(binding_power(TokenType::kDot));
        if (left->kind == NodeKind::kSubexpression) return add(std::move(left), std::move(right));
        return binary(NodeKind::kSubexpression, token.start, std::move(left), std::move(right));
      }
      case TokenType::kPipe:
        return binary(NodeKind::kPipe, token.start, std::move(left), expression(binding_power(token.type)));
      case TokenType::kOr:
        return binary(NodeKind::kOr, token.start, std::move(left), expression(binding_power(token.type)));
      case TokenType::kAnd:
        return binary(NodeKind::kAnd, token.start, std::move(left), expression(binding_power(token.type)));
      case TokenType::kEq: return comparator(token, Comparator::kEq, std::move(left));
      case TokenType::kNe: return comparator(token, Comparator::kNe, std::move(left));
      case TokenType::kLt: return comparator(token, Comparator::kLt, std::move(left));
      case TokenType::kLte: return comparator(token, Comparator::kLte, std::move(left));
      case TokenType::kGt: return comparator(token, Comparator::kGt, std::move(left));
      case TokenType::kGte: return comparator(token, Comparator::kGte, std::move(left));
      case TokenType::kLparen: return function_call(token, std::move(left));
      case TokenType::kFilter: return filter(token, std::move(left));
      case TokenType::kFlatten: {
        NodePtr flat = add(make(NodeKind::kFlatten, token.start), std::move(left));
        return binary(NodeKind::kProjection, token.start, std::move(flat),
                      projection_rhs(binding_power(TokenType::kFlatten)));
      }
      case TokenType::kLbracket: {
        const TokenType next = current().type;
        if (next == TokenType::kNumber || next == TokenType::kColon) {
          NodePtr right = index_or_slice();
          if (left->kind == NodeKind::kIndexExpression && right->kind == NodeKind::kIndex) {
            return add(std::move(left), std::move(right));
          }
          return project_if_slice(token, std::move(left), std::move(right));
        }
        match(TokenType::kStar, "a number, ':', '*' or '?' after '['");
        match(TokenType::kRbracket, "']' after '[*'");
        return binary(NodeKind::kProjection, token.start, std::move(left),
                      projection_rhs(binding_power(TokenType::kStar)));
      }
      default: fail(token, "expected an operator such as '.', '|', '||', '&&', '[' or a comparison");
    }
  }

  NodePtr comparator(const Token& token, Comparator op, NodePtr left) {
    NodePtr right = expression(binding_power(token.type));
    NodePtr node = binary(NodeKind::kComparator, token.start, std::move(left), std::move(right));
    node->op = op;
    return node;
  }

  NodePtr filter(const Token& token, NodePtr left) {
    NodePtr condition = expression(0);
    match(TokenType::kRbracket, "']' to close the filter '[?'");
    NodePtr right = current().type == TokenType::kFlatten ? identity(token.start)
                                                          : projection_rhs(binding_power(TokenType::kFilter));
    NodePtr node = binary(NodeKind::kFilterProjection, token.start, std::move(left), std::move(right));
    return add(std::move(node), std::move(condition));
  }

  NodePtr project_if_slice(const Token& token, NodePtr left, NodePtr right) {
    const bool slice = right->kind == NodeKind::kSlice;
    NodePtr index_expr = binary(NodeKind::kIndexExpression, token.start, std::move(left), std::move(right));
    if (!slice) return index_expr;
    return binary(NodeKind::kProjection, token.start, std::move(index_expr),
                  projection_rhs(binding_power(TokenType::kStar)));
  }

  // After '[': either `number]` or a slice `start:stop:step]`.
  NodePtr index_or_slice() {
    const Token& first = current();
    if (first.type == TokenType::kColon || peek(1).type == TokenType::kColon) return slice(first);
    NodePtr node = make(NodeKind::kIndex, first.start);
    node->index = first.number;
    advance();
    match(TokenType::kRbracket, "']' after the index");
    return node;
  }

  NodePtr slice(const Token& first) {
    NodePtr node = make(NodeKind::kSlice, first.start);
    std::size_t part = 0;
    while (current().type != TokenType::kRbracket) {
      if (current().type == TokenType::kColon) {
        if (++part == 3) fail(current(), "a slice has at most two ':'");
        advance();
      } else if (current().type == TokenType::kNumber) {
        if (node->slice[part]) fail(current(), "expected ':' or ']' in the slice");
        node->slice[part] = current().number;
        advance();
      } else {
        fail(current(), "expected a number, ':' or ']' in the slice");
      }
    }
    if (node->slice[2] && *node->slice[2] == 0) {
      defer(ErrorKind::kInvalidValue, first.start,
            "Invalid JMESPath slice at position " + std::to_string(first.start) +
                ": the step cannot be 0; use a positive or negative step");
    }
    advance();
    return node;
  }

  NodePtr projection_rhs(int rbp) {
    const Token& token = current();
    if (binding_power(token.type) < kProjectionStop) return identity(token.start);
    if (token.type == TokenType::kLbracket || token.type == TokenType::kFilter) return expression(rbp);
    if (token.type == TokenType::kDot) {
      advance();
      return dot_rhs(rbp);
    }
    fail(token, "expected '.', '[' or '[?' after a projection");
  }

  NodePtr dot_rhs(int rbp) {
    const Token& token = current();
    switch (token.type) {
      case TokenType::kQuotedIdentifier:
      case TokenType::kUnquotedIdentifier:
      case TokenType::kStar: return expression(rbp);
      case TokenType::kLbracket: advance(); return multi_select_list(token);
      case TokenType::kLbrace: advance(); return multi_select_hash(token);
      default: fail(token, "expected an identifier, '*', '[' or '{' after '.'");
    }
  }

  NodePtr multi_select_list(const Token& open) {
    NodePtr node = make(NodeKind::kMultiSelectList, open.start);
    while (true) {
      node = add(std::move(node), expression(0));
      if (current().type == TokenType::kRbracket) break;
      match(TokenType::kComma, "',' or ']' in the list");
    }
    advance();
    return node;
  }

  NodePtr multi_select_hash(const Token& open) {
    NodePtr node = make(NodeKind::kMultiSelectHash, open.start);
    while (true) {
      const Token& key = current();
      if (key.type != TokenType::kQuotedIdentifier && key.type != TokenType::kUnquotedIdentifier) {
        fail(key, "expected a key name in '{...}'");
      }
      node->keys.push_back(key.text);
      advance();
      match(TokenType::kColon, "':' after the key name");
      node = add(std::move(node), expression(0));
      if (current().type == TokenType::kRbrace) break;
      match(TokenType::kComma, "',' or '}' in '{...}'");
    }
    advance();
    return node;
  }

  NodePtr function_call(const Token& paren, NodePtr left) {
    const Token& name_token = tokens_[index_ >= 2 ? index_ - 2 : 0];
    if (left->kind != NodeKind::kField || name_token.type != TokenType::kUnquotedIdentifier) {
      fail(paren, "only a plain name can be called as a function");
    }
    NodePtr node = make(NodeKind::kFunction, left->position);
    node->name = left->name;
    if (current().type != TokenType::kRparen) {
      while (true) {
        node = add(std::move(node), expression(0));
        if (current().type == TokenType::kRparen) break;
        match(TokenType::kComma, "',' or ')' in the function arguments");
      }
    }
    advance();
    resolve(*node);
    return node;
  }

  void resolve(Node& call) {
    call.function = find_function(call.name);
    if (call.function == nullptr) {
      defer(ErrorKind::kUnknownFunction, call.position,
            "Unknown JMESPath function " + call.name + "() at position " + std::to_string(call.position) +
                "; see https://jmespath.org/specification.html#built-in-functions for the list");
      return;
    }
    const std::string problem = check_arity(*call.function, call.children.size());
    if (!problem.empty()) {
      defer(ErrorKind::kInvalidArity, call.position,
            "Invalid JMESPath function call at position " + std::to_string(call.position) + ": " + problem);
    }
  }

  std::string_view text_;
  Tokens lexed_;
  const std::vector<Token>& tokens_;
  std::size_t index_ = 0;
  std::size_t nesting_ = 0;
  std::optional<QueryError> deferred_;
};

}  // namespace

NodePtr parse(std::string_view expression) { return Parser(expression).run(); }

}  // namespace batchai::query::detail
