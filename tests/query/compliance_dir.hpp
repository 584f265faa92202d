// Test helper: where the JMESPath compliance suite lives (../shared/reference/jmespath-compliance
// beside the project, or $BATCHAI_JMESPATH_COMPLIANCE_DIR) and how to load its files.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "batchai/query/jmespath.hpp"

namespace batchai::query::testing {

inline std::filesystem::path compliance_dir() {
  if (const char* env = std::getenv("BATCHAI_JMESPATH_COMPLIANCE_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::filesystem::path(BATCHAI_SOURCE_DIR "/../shared/reference/jmespath-compliance");
}

// The suite's *.json files in name order (empty when the folder is missing).
inline std::vector<std::filesystem::path> compliance_files() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(compliance_dir(), ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline Json load_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

}  // namespace batchai::query::testing
