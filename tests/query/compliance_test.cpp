// Runs every case of the JMESPath compliance suite (../shared/reference/jmespath-compliance):
// results must equal the expected JSON, error cases must raise QueryError of the named kind,
// benchmark cases must evaluate without error.
#include <gtest/gtest.h>

#include <iostream>

#include "batchai/query/jmespath.hpp"
#include "query/compliance_dir.hpp"
#include "query/json_equal.hpp"

namespace batchai::query {
namespace {

struct Outcome {
  bool ok = false;
  std::string detail;
};

Outcome run_case(const Json& given, const Json& test) {
  const std::string expression = test.at("expression").get<std::string>();
  const bool expects_error = test.contains("error");
  try {
    const Json result = Expression::compile(expression).evaluate(given);
    if (expects_error) {
      return {false, "expected a " + test.at("error").get<std::string>() + " error, got " + result.dump()};
    }
    if (test.contains("bench")) return {true, {}};
    if (!test.contains("result")) return {false, "case has neither result, error nor bench"};
    if (testing::json_equal(result, test.at("result"))) return {true, {}};
    return {false, "expected " + test.at("result").dump() + ", got " + result.dump()};
  } catch (const QueryError& e) {
    if (expects_error && test.at("error").get<std::string>() == to_string(e.kind())) return {true, {}};
    return {false, std::string("unexpected ") + to_string(e.kind()) + " error: " + e.what()};
  }
}

TEST(JmespathCompliance, EveryCasePasses) {
  const auto files = testing::compliance_files();
  if (files.empty()) {
    GTEST_SKIP() << "JMESPath compliance suite not found at " << testing::compliance_dir()
                 << "; set BATCHAI_JMESPATH_COMPLIANCE_DIR to the folder holding its *.json files";
  }
  std::size_t total = 0;
  std::size_t passed = 0;
  std::size_t error_cases = 0;
  for (const auto& file : files) {
    const Json groups = testing::load_json_file(file);
    for (const auto& group : groups) {
      const Json& given = group.at("given");
      for (const auto& test : group.at("cases")) {
        ++total;
        if (test.contains("error")) ++error_cases;
        const Outcome outcome = run_case(given, test);
        if (outcome.ok) {
          ++passed;
        } else {
          ADD_FAILURE() << file.filename().string() << ": `" << test.at("expression").get<std::string>()
                        << "`: " << outcome.detail;
        }
      }
    }
  }
  std::cout << "JMESPath compliance: " << passed << "/" << total << " cases passed (" << error_cases
            << " expect an error) from " << files.size() << " files\n";
  EXPECT_EQ(passed, total);
  EXPECT_GT(total, 0U);
}

}  // namespace
}  // namespace batchai::query
