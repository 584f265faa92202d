// The jobs list's text path (src/serve/wire_cache.hpp): a page joined from cached wire texts is
// the same JSON, byte for byte, as the tree the other lists build (to_wire_list + nextLink), for
// jobs in every state; a row whose stored text changed is rendered again, never served stale.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "arm/wire.hpp"
#include "arm/wire_cache.hpp"

namespace batchai::serve {
namespace {

namespace cp = control_plane;

// A stored job document as the control plane writes it (flattened; az's shape) in `state`.
std::string job_doc(int i, const std::string& state) {
  Json doc = {{"id", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/experiments/e/jobs/j" +
                         std::to_string(i)},
              {"name", "j" + std::to_string(i)},
              {"type", "Microsoft.BatchAI/workspaces/experiments/jobs"},
              {"resourceGroup", "rg"},
              {"executionState", state},
              {"nodeCount", 1},
              {"constraints", {{"maxWallClockTime", "7 days, 0:00:00"}}},
              {"customToolkitSettings", {{"commandLine", "echo \"é\" \\ ok"}}}};
  if (state == "succeeded" || state == "failed") doc["executionInfo"] = {{"exitCode", state == "failed" ? 1 : 0}};
  if (state == "failed") doc["executionInfo"]["errors"] = Json::array({{{"code", "JobFailed"}, {"message", "x"}}});
  if (i % 2) doc["properties"] = {{"priority", "normal"}};  // one already nested: merged
  return doc.dump();
}

// What paged_answer builds for the same rows: the tree path.
Json tree_page(const cp::TextPage& page, const std::optional<std::string>& link) {
  Json docs = Json::array();
  for (const auto& r : page.rows) docs.push_back(Json::parse(r.doc));
  Json answer = to_wire_list(std::move(docs));
  if (link) answer["nextLink"] = *link;
  return answer;
}

cp::TextPage page_of_states() {
  cp::TextPage page;
  const char* states[] = {"queued", "running", "terminating", "succeeded", "failed"};
  for (int i = 0; i < 10; ++i) page.rows.push_back({i + 1, job_doc(i, states[i % 5])});
  return page;
}

TEST(ServeWireCache, PageIsTheTreePageForEveryState) {
  WireCache cache;
  const cp::TextPage page = page_of_states();
  for (const std::optional<std::string>& link : {std::optional<std::string>(), std::optional<std::string>("https://h/x?$skiptoken=MTA&a=\"q\"")}) {
    for (int pass = 0; pass < 2; ++pass) {  // cold, then from the cache
      const std::string text = cache.page(page, link);
      EXPECT_EQ(Json::parse(text), tree_page(page, link));
      EXPECT_EQ(text, tree_page(page, link).dump());  // the very bytes
    }
  }
  EXPECT_EQ(cache.entries(), 10u);
  EXPECT_EQ(cache.page({}, std::nullopt), R"({"value":[]})");
}

TEST(ServeWireCache, AChangedJobIsNeverServedStale) {
  WireCache cache;
  cp::TextPage page = page_of_states();
  (void)cache.page(page, std::nullopt);
  for (const char* state : {"running", "succeeded"}) {
    page.rows[0].doc = job_doc(0, state);  // same row, new stored text
    const Json answer = Json::parse(cache.page(page, std::nullopt));
    EXPECT_EQ(answer["value"][0]["properties"]["executionState"], state);
    EXPECT_EQ(answer, tree_page(page, std::nullopt));
  }
  // A row id used again by another job (rows removed, ids reused) is no hit either.
  page.rows[1].doc = job_doc(42, "queued");
  EXPECT_EQ(Json::parse(cache.page(page, std::nullopt))["value"][1]["name"], "j42");
}

TEST(ServeWireCache, BoundedInEntriesAndBytes) {
  WireCache by_entries(4, std::size_t{1} << 30);
  const cp::TextPage page = page_of_states();
  EXPECT_EQ(Json::parse(by_entries.page(page, std::nullopt)), tree_page(page, std::nullopt));
  EXPECT_EQ(by_entries.entries(), 4u);

  const std::size_t one = by_entries.bytes() / 4;
  WireCache by_bytes(1000, one * 3);
  EXPECT_EQ(Json::parse(by_bytes.page(page, std::nullopt)), tree_page(page, std::nullopt));
  EXPECT_LE(by_bytes.bytes(), one * 3);
  EXPECT_GE(by_bytes.entries(), 1u);
  EXPECT_LE(by_bytes.entries(), 3u);

  WireCache none(1000, 10);  // every entry too big to keep: rendered, still right
  EXPECT_EQ(Json::parse(none.page(page, std::nullopt)), tree_page(page, std::nullopt));
  EXPECT_EQ(none.entries(), 0u);
}

// Workers race on rows whose text keeps changing: each answer is its own text's rendering.
TEST(ServeWireCache, ThreadsGetTheirOwnTextsRendering) {
  WireCache cache(6, std::size_t{1} << 20);  // small: evictions race too
  const char* states[] = {"queued", "running", "succeeded", "failed"};
  std::atomic<int> wrong = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 300; ++k) {
        const std::string doc = job_doc(k % 9, states[(k + t) % 4]);
        if (cache.wire(k % 9, doc)->wire != to_wire(Json::parse(doc)).dump()) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(cache.entries(), 6u);
}

}  // namespace
}  // namespace batchai::serve
