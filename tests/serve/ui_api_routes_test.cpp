// The dashboard API's route table (ui/ui_api.cpp) against docs/dashboard.md "API": every endpoint
// served is documented, in the same order, and nothing documented is missing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serve_fixture.hpp"
#include "ui/ui_api.hpp"

namespace batchai::serve {
namespace {

TEST(UiApiRoutes, DocsListEveryEndpointInTableOrder) {
  std::vector<std::vector<std::string>> table;
  for (std::string_view path : ui_api_paths()) table.push_back({std::string(path)});
  // The endpoint column: "`job/log?…&file`" -> job/log.
  const auto docs = documented_rows("docs/dashboard.md", "### API", "### ", R"(^\| `([a-z/]+)[`?])");
  ASSERT_FALSE(docs.empty()) << "docs/dashboard.md has no endpoint table under ### API";
  EXPECT_EQ(docs, table);
}

}  // namespace
}  // namespace batchai::serve
