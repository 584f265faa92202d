// The dashboard API's route table (ui/ui_api.cpp) against docs/dashboard.md "API": every endpoint
// served is documented, in the same order, and nothing documented is missing.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "ui/ui_api.hpp"

namespace batchai::serve {
namespace {

// The endpoint column of the docs' API table: "`job/log?…&file`" -> job/log.
std::vector<std::string> documented_endpoints() {
  std::ifstream in(std::string(BATCHAI_SOURCE_DIR) + "/docs/dashboard.md");
  std::vector<std::string> out;
  std::string line;
  bool inside = false;
  const std::regex row(R"(^\| `([a-z/]+)[`?])");
  while (std::getline(in, line)) {
    if (line.rfind("### API", 0) == 0) inside = true;
    else if (inside && line.rfind("### ", 0) == 0) break;
    std::smatch m;
    if (inside && std::regex_search(line, m, row)) out.push_back(m[1]);
  }
  return out;
}

TEST(UiApiRoutes, DocsListEveryEndpointInTableOrder) {
  std::vector<std::string> table;
  for (std::string_view path : ui_api_paths()) table.emplace_back(path);
  const auto docs = documented_endpoints();
  ASSERT_FALSE(docs.empty()) << "docs/dashboard.md has no endpoint table under ### API";
  EXPECT_EQ(docs, table);
}

}  // namespace
}  // namespace batchai::serve
