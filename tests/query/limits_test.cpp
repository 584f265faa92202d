// Bounds of --query evaluation (issue 13): results that grow without bound end with a
// QueryError instead of std::bad_alloc, and JSON literals are depth-limited; large but honest
// results (10,000 documents copied, doubled a few times) still evaluate.
#include <gtest/gtest.h>

#include <string>

#include "batchai/query/jmespath.hpp"

namespace batchai::query {
namespace {

std::string doubling(int steps, const std::string& last) {
  std::string expression;
  for (int i = 0; i < steps; ++i) expression += "[@,@] | ";
  return expression + last;
}

// The QueryError of evaluating `expression` on `data` ("" when it evaluates).
std::string error_of(const std::string& expression, const Json& data) {
  try {
    Expression::compile(expression).evaluate(data);
    return "";
  } catch (const QueryError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidValue);
    return e.what();
  }
}

Json documents(int count) {
  Json list = Json::array();
  for (int i = 0; i < count; ++i) {
    list.push_back({{"name", "job" + std::to_string(i)},
                    {"executionState", "succeeded"},
                    {"nodeCount", 1},
                    {"tags", {{"team", "vision"}, {"owner", "someone@example.com"}}}});
  }
  return list;
}

TEST(QueryLimits, DoublingResultEndsWithAnError) {
  const Json data = documents(10);
  // 2^24 copies of the list: the std::bad_alloc.
  EXPECT_EQ(error_of(doubling(24, "length(@)"), data),
            "the result grew past 512 MiB while being evaluated; narrow the expression (filter, or select fewer fields)");
  // Strings doubled by join() are charged by their bytes.
  std::string joins = "join('', [[0].name, [0].name])";
  for (int i = 0; i < 40; ++i) joins += " | join('', [@, @])";
  EXPECT_NE(error_of(joins + " | length(@)", data).find("grew past 512 MiB"), std::string::npos);
  std::string strings = "[0].name";
  for (int i = 0; i < 40; ++i) strings += " | to_string([@, @])";
  EXPECT_NE(error_of(strings + " | length(@)", data).find("grew past 512 MiB"), std::string::npos);
}

TEST(QueryLimits, LargeHonestResultsEvaluate) {
  const Json data = documents(10000);
  // Every document copied eight times over (the list doubled three times) stays well inside.
  EXPECT_EQ(Expression::compile(doubling(3, "[][][].name | length(@)")).evaluate(data), 80000);
  EXPECT_EQ(Expression::compile("[].{n: name, s: executionState, t: tags}").evaluate(data).size(), 10000u);
  EXPECT_EQ(Expression::compile("sort_by(@, &name)[-1].name").evaluate(data), "job9999");
}

TEST(QueryLimits, LiteralNestingIsBounded) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(Expression::compile("`" + nested(64) + "`").evaluate(Json()).is_array());
  try {
    Expression::compile("`" + nested(100000) + "`");
    FAIL() << "a literal nested 100,000 deep compiled";
  } catch (const QueryError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kSyntax);
    EXPECT_NE(std::string(e.what()).find("the JSON literal nests more than 64 levels deep"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace batchai::query
