// Checks results that reference parts of temporaries (function results, reference lists built by
// filters/sort_by/slices, pipes) against jmespath.py's answers, so no result can dangle.
// Expected values were produced with Debian's python3-jmespath 1.0.1.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "batchai/query/jmespath.hpp"
#include "query/json_equal.hpp"

namespace batchai::query {
namespace {

TEST(JmespathLifetimes, ResultsMatchReferenceImplementation) {
  const Json data = Json::parse(R"({"items":[{"a":3,"n":"c","t":[1,2]},{"a":1,"n":"a","t":[3]},{"a":0,"n":"b","t":[]},{"a":2,"n":"d","t":[4,[5]]}],"o":{"x":{"k":1},"y":{"k":2}}})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(keys(o) | [*])", R"(["x","y"])"},
      {R"(values(o)[1:])", R"([{"k":2}])"},
      {R"(sort(values(o)[*].k))", R"([1,2])"},
      {R"(items[?a] | sort_by(@, &a) | [0].n)", R"("b")"},
      {R"(values(merge(o, `{}`)) | reverse(@)[0])", R"({"k":2})"},
      {R"(map(&a, items[?a]))", R"([3,1,0,2])"},
      {R"(to_array(items[?a])[0].n)", R"("c")"},
      {R"([[items[0].a, items[1].a], [items[2].a]] | [][0])", R"([])"},
      {R"(items[?a][1:].n)", R"([])"},
      {R"(reverse(items[*])[0].t)", R"([4,[5]])"},
      {R"(length(to_string(items[?a > `1`])))", R"(55)"},
      {R"([@, @][0][0].o)", R"(null)"},
      {R"(not_null(items[?a > `5`], o))", R"([])"},
      {R"(items[].t[])", R"([1,2,3,4,[5]])"},
      {R"(items[*].t[] | [-1])", R"([5])"},
      {R"(max_by(items[?a], &a).t)", R"([1,2])"},
      {R"(min_by(reverse(items), &n).t)", R"([3])"},
      {R"(items[?a > `0`] | [?a < `3`] | [*].n)", R"(["a","d"])"},
      {R"(sort_by(items, &n)[*].t[0])", R"([3,1,4])"},
      {R"(items[0:2].{n: n, t: t[0]})", R"([{"n":"c","t":1},{"n":"a","t":3}])"},
      {R"(values(o).k)", R"(null)"},
      {R"(map(&t, items)[])", R"([1,2,3,4,[5]])"},
      {R"(join(',', sort_by(items, &a)[*].n))", R"("b,a,d,c")"},
      {R"(items[?contains(t, `3`)].n)", R"(["a"])"},
      {R"([?a])", R"(null)"},
      {R"(reverse(values(o))[*].k)", R"([2,1])"},
      {R"(items | [1:3] | [0].t | [0])", R"(3)"},
      {R"(sum(items[*].a))", R"(6)"},
      {R"(avg(map(&a, items)))", R"(1.5)"},
      {R"(items[1:] | reverse(@) | [?a] | [0].n)", R"("d")"},
      {R"(o.*.k)", R"([1,2])"},
      {R"(*.x)", R"([{"k":1}])"},
      {R"(items[? t == `[]`].n)", R"(["b"])"},
      {R"(to_array(@)[0].o.x)", R"({"k":1})"},
      {R"(items[*].t | [0][1])", R"(2)"},
      {R"([items[*].a, items[1:]] | [1][0].n)", R"("a")"},
      {R"(items[?a > `1`] | length(@))", R"(2)"},
      {R"(type(items[?a]))", R"("array")"},
      {R"(items[?a] == items[?a > `0`])", R"(false)"},
      {R"(sort_by(items, &a) | [-1].t | [1][0])", R"(null)"},
      {R"(merge(items[0], items[1]))", R"({"a":1,"n":"a","t":[3]})"},
      {R"(items[*].[a, n][])", R"([3,"c",1,"a",0,"b",2,"d"])"},
      {R"(map(&[a], items)[][])", R"([3,1,0,2])"},
      {R"(reverse(items)[?a][0].n)", R"([])"},
  };
  for (const auto& [expression, expected] : cases) {
    const Json result = search(expression, data);
    EXPECT_TRUE(testing::json_equal(result, Json::parse(expected)))
        << "`" << expression << "` gave " << result.dump() << ", expected " << expected;
  }
}

}  // namespace
}  // namespace batchai::query
