// Unit tests of the JMESPath engine beyond the compliance suite: what the CLI's --query needs
// (key order, search()), error kinds/positions/messages, number semantics and to_string().
#include <gtest/gtest.h>

#include <string>

#include "batchai/query/jmespath.hpp"

namespace batchai::query {
namespace {

Json clusters() {
  return Json::parse(R"([
    {"name": "nc6", "allocationState": "steady", "vmSize": "STANDARD_NC6", "nodes": 2},
    {"name": "d2", "allocationState": "resizing", "vmSize": "STANDARD_D2", "nodes": 0}
  ])");
}

// Runs `expression` and returns the QueryError it raised (fails the test if none).
QueryError error_of(const std::string& expression, const Json& data = Json::object()) {
  try {
    const Json result = search(expression, data);
    ADD_FAILURE() << "`" << expression << "` gave " << result.dump() << " instead of an error";
  } catch (const QueryError& e) {
    return e;
  }
  return QueryError(ErrorKind::kSyntax, 0, "none");
}

TEST(Jmespath, ProjectionToObjectKeepsKeyOrder) {
  const Json result = search("[].{name: name, state: allocationState}", clusters());
  ASSERT_EQ(result.size(), 2U);
  std::vector<std::string> keys;
  for (const auto& [key, value] : result[0].items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "state"}));
  EXPECT_EQ(result[1].dump(), R"({"name":"d2","state":"resizing"})");
  // Reversed order in the expression gives reversed columns.
  EXPECT_EQ(search("[0].{state: allocationState, name: name}", clusters()).dump(),
            R"({"state":"steady","name":"nc6"})");
}

TEST(Jmespath, SearchIsCompileThenEvaluate) {
  const Json data = clusters();
  EXPECT_EQ(search("[?nodes > `0`].name", data), Json::parse(R"(["nc6"])"));
  const Expression compiled = Expression::compile("[?allocationState=='resizing'] | [0].vmSize");
  EXPECT_EQ(compiled.evaluate(data), "STANDARD_D2");
  EXPECT_EQ(compiled.evaluate(Json::array()), Json());  // reusable on other documents
  EXPECT_EQ(search("length(@)", data), 2);
  EXPECT_EQ(search("sort_by(@, &name)[*].name", data), Json::parse(R"(["d2","nc6"])"));
  EXPECT_EQ(search("executionState", Json::parse(R"({"executionState":"running"})")), "running");
}

TEST(Jmespath, ExpressionIsMovable) {
  Expression a = Expression::compile("a");
  Expression b = std::move(a);
  a = Expression::compile("b");
  EXPECT_EQ(b.evaluate(Json::parse(R"({"a":1,"b":2})")), 1);
  EXPECT_EQ(a.evaluate(Json::parse(R"({"a":1,"b":2})")), 2);
}

TEST(Jmespath, SyntaxErrorsCarryPositionAndSentence) {
  const QueryError e = error_of("foo.]");
  EXPECT_EQ(e.kind(), ErrorKind::kSyntax);
  EXPECT_EQ(e.position(), 4U);
  EXPECT_EQ(std::string(e.what()).rfind("Invalid JMESPath expression at position 4: unexpected token ']'", 0), 0U)
      << e.what();

  EXPECT_EQ(error_of("foo[0").position(), 5U);
  EXPECT_NE(std::string(error_of("foo[0").what()).find("end of expression"), std::string::npos);
  EXPECT_EQ(error_of("a = b").position(), 2U);
  EXPECT_EQ(error_of("a || `\"bad`").position(), 5U);  // neither JSON nor a legacy string
  EXPECT_EQ(error_of("foo bar").position(), 4U);
  EXPECT_EQ(error_of("\"unclosed").position(), 0U);
  EXPECT_EQ(error_of("'unclosed").kind(), ErrorKind::kSyntax);
  EXPECT_EQ(error_of("a.-1").kind(), ErrorKind::kSyntax);
  EXPECT_EQ(error_of("f(a,)").kind(), ErrorKind::kSyntax);
}

TEST(Jmespath, FunctionErrorsHaveTheirKinds) {
  const QueryError unknown = error_of("foo | nope(@)");
  EXPECT_EQ(unknown.kind(), ErrorKind::kUnknownFunction);
  EXPECT_EQ(unknown.position(), 6U);
  EXPECT_NE(std::string(unknown.what()).find("nope()"), std::string::npos);

  const QueryError arity = error_of("length(a, b)");
  EXPECT_EQ(arity.kind(), ErrorKind::kInvalidArity);
  EXPECT_NE(std::string(arity.what()).find("takes 1 argument but 2 were given"), std::string::npos) << arity.what();
  EXPECT_EQ(error_of("merge()").kind(), ErrorKind::kInvalidArity);

  const QueryError type = error_of("abs(name)", Json::parse(R"({"name":"x"})"));
  EXPECT_EQ(type.kind(), ErrorKind::kInvalidType);
  EXPECT_NE(std::string(type.what()).find("argument 1 to be a number, but got string"), std::string::npos)
      << type.what();
  EXPECT_EQ(error_of("sort_by(@, &a)", Json::parse(R"([{"a":1},{"a":"x"}])")).kind(), ErrorKind::kInvalidType);
  const QueryError sum = error_of("sum(@)", Json::parse(R"([1,"2"])"));
  EXPECT_EQ(sum.kind(), ErrorKind::kInvalidType);
  EXPECT_NE(std::string(sum.what()).find("an array of numbers, but got an array whose element 1 is string"),
            std::string::npos)
      << sum.what();
  EXPECT_EQ(error_of("[::0]", Json::array()).kind(), ErrorKind::kInvalidValue);
  // A syntax error later in the text wins over an unknown function earlier, as in jmespath.py.
  EXPECT_EQ(error_of("nope(@) ]").kind(), ErrorKind::kSyntax);
}

TEST(Jmespath, ErrorKindNamesMatchTheSuite) {
  EXPECT_STREQ(to_string(ErrorKind::kSyntax), "syntax");
  EXPECT_STREQ(to_string(ErrorKind::kInvalidType), "invalid-type");
  EXPECT_STREQ(to_string(ErrorKind::kInvalidValue), "invalid-value");
  EXPECT_STREQ(to_string(ErrorKind::kInvalidArity), "invalid-arity");
  EXPECT_STREQ(to_string(ErrorKind::kUnknownFunction), "unknown-function");
}

TEST(Jmespath, NumbersKeepIntegerOrFloat) {
  const Json empty = Json::object();
  EXPECT_TRUE(search("abs(`-3`)", empty).is_number_integer());
  EXPECT_TRUE(search("abs(`-3.0`)", empty).is_number_float());
  EXPECT_TRUE(search("avg(`[2, 2]`)", empty).is_number_float());
  EXPECT_EQ(search("avg(`[1, 2]`)", empty), 1.5);
  EXPECT_TRUE(search("floor(`1.5`)", empty).is_number_integer());
  EXPECT_EQ(search("ceil(`-1.5`)", empty), -1);
  EXPECT_TRUE(search("sum(`[1, 2]`)", empty).is_number_integer());
  EXPECT_TRUE(search("sum(`[1, 2.0]`)", empty).is_number_float());
  EXPECT_EQ(search("sum(`[]`)", empty), 0);
  EXPECT_EQ(search("`1` == `1.0`", empty), true);
  EXPECT_EQ(search("`1` < `1.5`", empty), true);
  EXPECT_EQ(search("`true` == `1`", empty), false);
  EXPECT_EQ(search("'a' < `1`", empty), Json());  // ordering needs two numbers or two strings
  EXPECT_EQ(search("to_number('12')", empty), 12);
  EXPECT_EQ(search("to_number(' 1e3 ')", empty), 1000.0);
  EXPECT_EQ(search("to_number('abc')", empty), Json());
}

TEST(Jmespath, ToStringIsCompactPythonJson) {
  const Json empty = Json::object();
  EXPECT_EQ(search(R"(to_string(`{"a": [1, 2.0, "x"], "b": null}`))", empty), R"({"a":[1,2.0,"x"],"b":null})");
  EXPECT_EQ(search("to_string(`[1e20, 0.00001, 0.0001, 1.5e-7, 123456.789]`)", empty),
            "[1e+20,1e-05,0.0001,1.5e-07,123456.789]");
  EXPECT_EQ(search(R"(to_string(`["\u2713\ud834\udd1e\n"]`))", empty), R"(["\u2713\ud834\udd1e\n"])");
  EXPECT_EQ(search("to_string('plain')", empty), "plain");
}

TEST(Jmespath, SortIsStableAndDeepEqualityIgnoresKeyOrder) {
  const Json data = Json::parse(R"([{"k":1,"id":"a"},{"k":0,"id":"b"},{"k":1,"id":"c"},{"k":0,"id":"d"}])");
  EXPECT_EQ(search("sort_by(@, &k)[*].id", data), Json::parse(R"(["b","d","a","c"])"));
  EXPECT_EQ(search("max_by(@, &k).id", data), "a");
  EXPECT_EQ(search("min_by(@, &k).id", data), "b");
  EXPECT_EQ(search(R"(`{"a":1,"b":[1,2]}` == `{"b":[1.0,2],"a":1}`)", Json()), true);
}

TEST(Jmespath, ProjectionsAndSlices) {
  const Json data = Json::parse(R"({"a": {"x": {"b": {"c": 1}}, "y": {"b": {"c": 2}}}, "l": [0,1,2,3,4,5]})");
  EXPECT_EQ(search("a.*.b.c", data), Json::parse("[1,2]"));
  EXPECT_EQ(search("l[::-2]", data), Json::parse("[5,3,1]"));
  EXPECT_EQ(search("l[-2:]", data), Json::parse("[4,5]"));
  EXPECT_EQ(search("l[10:]", data), Json::array());
  EXPECT_EQ(search("l[1:3] | [1]", data), 2);
  EXPECT_EQ(search("[l[0], a.x.b.c] | max(@)", data), 1);
  EXPECT_EQ(search("keys(a)", data), Json::parse(R"(["x","y"])"));
  EXPECT_EQ(search("merge(a.x, `{\"z\": 3}`)", data), Json::parse(R"({"b":{"c":1},"z":3})"));
}

TEST(Jmespath, TemporaryResultsOutliveTheirSource) {
  // Results that point into a temporary (function results, pipes) must be copied out.
  const Json data = Json::parse(R"({"items":[{"n":"b","v":[1]},{"n":"a","v":[2]}]})");
  EXPECT_EQ(search("sort_by(items, &n)[0].v", data), Json::parse("[2]"));
  EXPECT_EQ(search("items[*].v | [1][0]", data), 2);
  EXPECT_EQ(search("not_null(`null`, items)[1].n", data), "a");
  EXPECT_EQ(search("reverse(items)[].v[]", data), Json::parse("[2,1]"));
  EXPECT_EQ(search("max_by(items[*], &n).v", data), Json::parse("[1]"));
}

TEST(Jmespath, LargeListQuery) {
  Json resources = Json::array();
  for (int i = 0; i < 10000; ++i) {
    resources.push_back({{"name", "job" + std::to_string(i)}, {"executionState", i % 3 == 0 ? "running" : "queued"},
                         {"priority", i % 7}});
  }
  const Json running = search("[?executionState=='running'].{name: name, p: priority}", resources);
  EXPECT_EQ(running.size(), 3334U);
  EXPECT_EQ(running[1].dump(), R"({"name":"job3","p":3})");
  EXPECT_EQ(search("length([?priority > `5`])", resources), 1428);
}

// az scripts filter on ISO timestamps: jmespath.py orders strings, so we do too.
TEST(Jmespath, StringsOrderByCodePointLikeJmespathPy) {
  Json data = Json::array({{{"t", "2018-07-01"}}, {{"t", "2018-05-01"}}});
  EXPECT_EQ(search("[?t > '2018-06'].t", data), Json::array({"2018-07-01"}));
  EXPECT_EQ(search("'a' < 'b'", Json::object()), Json(true));
  EXPECT_EQ(search("'b' <= 'a'", Json::object()), Json(false));
  EXPECT_TRUE(search("'a' < `1`", Json::object()).is_null());
}

}  // namespace
}  // namespace batchai::query
