// Fuzz-style robustness tests: mutated and truncated suite expressions, random expressions and
// random documents (fixed seed). Every run must end in a result or a QueryError: no crash, no
// other exception, no hang, and no stack overflow on deeply nested input.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "batchai/query/jmespath.hpp"
#include "query/compliance_dir.hpp"

namespace batchai::query {
namespace {

// Expressions of the compliance suite plus a few of our own, so the test runs without it too.
std::vector<std::string> seed_expressions(std::vector<Json>* documents) {
  std::vector<std::string> out = {
      "foo.bar[0].baz",   "[?a > `1`].b | [0]", "sort_by(@, &a)[*].{x: a, y: b}", "a || b && !c",
      "*.foo[:2:-1]",     "map(&to_string(@), [0, 1])", "merge(`{}`, @)", "length(join(',', ['a']))",
      "foo[].bar[?baz == 'x'][]", "abs(`-1`) | to_array(@)[0]", "reverse(sort(values(@)))", "@.\"a b\"[-1]",
  };
  for (const auto& file : testing::compliance_files()) {
    for (const auto& group : testing::load_json_file(file)) {
      documents->push_back(group.at("given"));
      for (const auto& test : group.at("cases")) out.push_back(test.at("expression").get<std::string>());
    }
  }
  return out;
}

Json random_json(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 0 ? 7 : 4);
  static const char* kKeys[] = {"a", "b", "c", "foo", "bar", "baz", "name", "0"};
  switch (kind(rng)) {
    case 0: return nullptr;
    case 1: return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2: return std::uniform_int_distribution<int>(-5, 5)(rng);
    case 3: return std::uniform_real_distribution<double>(-10, 10)(rng);
    case 4: return std::string(kKeys[std::uniform_int_distribution<int>(0, 7)(rng)]);
    case 5:
    case 6: {
      Json object = Json::object();
      const int n = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int i = 0; i < n; ++i) object[kKeys[std::uniform_int_distribution<int>(0, 7)(rng)]] = random_json(rng, depth - 1);
      return object;
    }
    default: {
      Json array = Json::array();
      const int n = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int i = 0; i < n; ++i) array.push_back(random_json(rng, depth - 1));
      return array;
    }
  }
}

std::string mutate(std::mt19937& rng, const std::string& base, const std::vector<std::string>& pool) {
  static const std::vector<std::string> kPieces = {
      ".", "*", "[", "]", "[]", "[?", "(", ")", "{", "}", ",", ":", "@", "&", "|", "||", "&&", "!", "==", "!=",
      "<", "<=", ">", ">=", "`", "'", "\"", "\\", "-", "0", "-1", "a", "foo", "length(", "sort_by(", "`[1]`",
      "'x'", "\"q\"", " ", "\xe2\x9c\x93", "\\u", "::", "[::-1]", "max_by(@, &"};
  std::string s = base;
  const int edits = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, s.size())(rng);
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0: s = s.substr(0, at); break;  // truncate
      case 1:
        if (at < s.size()) s.erase(at, 1);
        break;
      case 2: s.insert(at, kPieces[std::uniform_int_distribution<std::size_t>(0, kPieces.size() - 1)(rng)]); break;
      case 3: s.insert(at, std::string(1, static_cast<char>(std::uniform_int_distribution<int>(1, 127)(rng)))); break;
      default: s += " | " + pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)]; break;
    }
  }
  return s;
}

// Runs one expression; fails the test on anything but a result or a QueryError.
void run_one(const std::string& expression, const Json& document, std::size_t* errors) {
  try {
    const Expression compiled = Expression::compile(expression);
    (void)compiled.evaluate(document);
  } catch (const QueryError& e) {
    ++*errors;
    EXPECT_LE(e.position(), expression.size()) << expression;
    EXPECT_NE(std::string(e.what()), "") << expression;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "`" << expression << "` threw " << typeid(e).name() << ": " << e.what();
  }
}

TEST(JmespathFuzz, MutatedExpressionsGiveResultOrQueryError) {
  std::vector<Json> documents;
  const std::vector<std::string> pool = seed_expressions(&documents);
  std::mt19937 rng(20240521);
  for (int i = 0; i < 50; ++i) documents.push_back(random_json(rng, 4));
  constexpr int kIterations = 100000;
  std::size_t errors = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    const std::string& base = pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)];
    const Json& document = documents[std::uniform_int_distribution<std::size_t>(0, documents.size() - 1)(rng)];
    run_one(mutate(rng, base, pool), document, &errors);
    if (HasFailure()) break;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << kIterations << " fuzz iterations, " << errors << " QueryErrors, " << seconds << " s\n";
  EXPECT_GT(errors, 0U);
  EXPECT_LT(errors, static_cast<std::size_t>(kIterations));
}

TEST(JmespathFuzz, RandomTokenSoup) {
  static const std::vector<std::string> kTokens = {
      "a", "b", ".", "*", "[", "]", "[]", "[?", "(", ")", "{", "}", ",", ":", "@", "&", "|", "||", "&&", "!",
      "==", "<", "`1`", "'s'", "1", "-1", "length(", "sort_by(", "not_null(", "map(", "x:"};
  std::mt19937 rng(7);
  std::size_t errors = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int n = std::uniform_int_distribution<int>(1, 12)(rng);
    for (int k = 0; k < n; ++k) s += kTokens[std::uniform_int_distribution<std::size_t>(0, kTokens.size() - 1)(rng)];
    run_one(s, random_json(rng, 3), &errors);
    if (HasFailure()) break;
  }
  EXPECT_GT(errors, 0U);
}

TEST(JmespathFuzz, DeepNestingIsASyntaxErrorNotAStackOverflow) {
  const std::vector<std::string> deep = {
      std::string(100000, '('),
      std::string(100000, '(') + "a" + std::string(100000, ')'),
      std::string(100000, '['),
      std::string(100000, '!') + "a",
      std::string(100000, '&') + "a",
      [] {
        std::string s;
        for (int i = 0; i < 50000; ++i) s += "a||";
        return s + "a";
      }(),
      [] {
        std::string s;
        for (int i = 0; i < 30000; ++i) s += "{a:";
        return s;
      }(),
      [] {
        std::string s = "a";
        for (int i = 0; i < 30000; ++i) s += "[*]";
        return s;
      }(),
  };
  for (const auto& expression : deep) {
    try {
      (void)search(expression, Json::object());
      ADD_FAILURE() << "a " << expression.size() << "-character nested expression was accepted";
    } catch (const QueryError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kSyntax);
    }
  }
  // Long flat chains are fine: they are flattened, not nested.
  std::string chain = "a";
  for (int i = 0; i < 100000; ++i) chain += ".a";
  EXPECT_EQ(search(chain, Json::object()), Json());
  std::string ands = "a";
  for (int i = 0; i < 200; ++i) ands += " && a";
  EXPECT_EQ(search(ands, Json::parse(R"({"a": 1})")), 1);
}

}  // namespace
}  // namespace batchai::query
