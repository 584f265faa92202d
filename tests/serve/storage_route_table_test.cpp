// The storage route table (storage/storage_route_table.hpp) against docs/serve-clients.md
// "Routes" (the two cannot drift), and its matching: methods, levels of the path, restype and comp
// as Storage tells its operations apart; what no row has is left to UnsupportedHttpVerb.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "storage/storage_route_table.hpp"

namespace batchai::serve {
namespace {

using S = StorageService;
using L = PathLevel;

// A row as the docs write it: service, methods, path, restype, comp.
using Row = std::array<std::string, 5>;

std::vector<Row> documented_rows() {
  std::ifstream in(std::string(BATCHAI_SOURCE_DIR) + "/docs/serve-clients.md");
  std::vector<Row> rows;
  std::string line;
  bool inside = false;
  const std::regex row(R"(^\| `(\w+)` \| `([A-Z ]+)` \| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|)");
  while (std::getline(in, line)) {
    if (line.find("<!-- storage-routes: begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- storage-routes: end -->") != std::string::npos) break;
    std::smatch m;
    if (inside && std::regex_search(line, m, row)) rows.push_back({m[1], m[2], m[3], m[4], m[5]});
  }
  return rows;
}

std::string path_of(PathLevel level) {
  switch (level) {
    case L::kAccount: return "/";
    case L::kTop: return "/{top}";
    case L::kBelow: return "/{top}/{path}";
    case L::kTopOrBelow: return "/{top}[/{path}]";
  }
  return "?";
}

std::string param_of(std::string_view value) { return value.empty() ? "-" : std::string(value); }

TEST(StorageRouteTable, DocsListEveryRouteInTableOrder) {
  std::vector<Row> table;
  for (const StorageRoute& r : storage_route_table())
    table.push_back({r.service == S::kFile ? "file" : "blob", std::string(r.methods), path_of(r.level),
                     param_of(r.restype), param_of(r.comp)});
  const auto docs = documented_rows();
  ASSERT_FALSE(docs.empty()) << "docs/serve-clients.md has no route table between the storage-routes markers";
  EXPECT_EQ(docs, table);
}

StorageHandler handler(S service, const char* method, L level, const char* restype, const char* comp) {
  const StorageRoute* r = match_storage_route(storage_route_table(), service, method, level, restype, comp);
  return r ? r->handler : nullptr;
}

TEST(StorageRouteTable, OperationsAreToldApartAsStorageDoes) {
  EXPECT_EQ(handler(S::kFile, "GET", L::kAccount, "", "list"), share_list);
  EXPECT_EQ(handler(S::kBlob, "GET", L::kAccount, "", "list"), container_list);
  EXPECT_EQ(handler(S::kFile, "HEAD", L::kTop, "share", ""), share_properties);
  EXPECT_EQ(handler(S::kFile, "DELETE", L::kTop, "share", "anything"), share_delete);
  // A share's root is a directory too.
  EXPECT_EQ(handler(S::kFile, "GET", L::kTop, "directory", "list"), directory_list);
  EXPECT_EQ(handler(S::kFile, "HEAD", L::kBelow, "directory", ""), directory_properties);
  EXPECT_EQ(handler(S::kFile, "PUT", L::kBelow, "", "range"), file_put_range);
  EXPECT_EQ(handler(S::kFile, "PUT", L::kBelow, "", ""), file_create);
  EXPECT_EQ(handler(S::kFile, "HEAD", L::kBelow, "", ""), file_get);
  EXPECT_EQ(handler(S::kBlob, "GET", L::kTop, "container", "list"), blob_list);
  EXPECT_EQ(handler(S::kBlob, "PUT", L::kBelow, "", ""), blob_put);
}

TEST(StorageRouteTable, WhatNoRowServesIsLeftUnmatched) {
  EXPECT_EQ(handler(S::kFile, "HEAD", L::kAccount, "", "list"), nullptr);   // a listing is GET only
  EXPECT_EQ(handler(S::kFile, "GET", L::kTop, "", ""), nullptr);            // a share needs restype=share
  EXPECT_EQ(handler(S::kFile, "GET", L::kBelow, "share", ""), nullptr);     // a share has no path
  EXPECT_EQ(handler(S::kFile, "PUT", L::kBelow, "", "metadata"), nullptr);  // not served
  EXPECT_EQ(handler(S::kFile, "POST", L::kBelow, "", ""), nullptr);
  EXPECT_EQ(handler(S::kBlob, "PUT", L::kBelow, "", "block"), nullptr);     // Put Block: not served
  EXPECT_EQ(handler(S::kBlob, "GET", L::kBelow, "directory", ""), nullptr);
  EXPECT_EQ(handler(S::kBlob, "PUT", L::kTop, "", ""), nullptr);            // a container needs restype
}

}  // namespace
}  // namespace batchai::serve
