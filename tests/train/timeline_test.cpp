// Timeline: Chrome-trace JSON with one "X" event per span, safe from many threads, and a
// disabled timeline records nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "io/timeline.hpp"
#include "support/temp_dir.hpp"

namespace batchai::train {
namespace {
namespace fs = std::filesystem;

TEST(Timeline, WritesChromeTraceEvents) {
  const test::TempDir tmp("batchai-timeline-test");
  const fs::path path = tmp / "run" / "timeline.json";
  {
    Timeline timeline(path.string(), 3);
    for (const char* name : {"data", "forward", "backward", "allreduce", "update"}) {
      ScopedSpan span(timeline, name);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(timeline.event_count(), 5u);
  }  // the destructor writes the file
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in);
  const auto& events = json.at("traceEvents");
  std::vector<std::string> names;
  std::int64_t last_end = 0;
  for (const auto& e : events) {
    if (e["ph"] != "X") continue;
    names.push_back(e["name"]);
    EXPECT_EQ(e["pid"], 3);
    EXPECT_GE(e["dur"].get<std::int64_t>(), 1000);
    EXPECT_GE(e["ts"].get<std::int64_t>(), last_end);
    last_end = e["ts"].get<std::int64_t>() + e["dur"].get<std::int64_t>();
    EXPECT_TRUE(e.contains("tid"));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"data", "forward", "backward", "allreduce", "update"}));
}

TEST(Timeline, ConcurrentAppendsAreAllKept) {
  const test::TempDir tmp("batchai-timeline-mt");
  const fs::path path = tmp / "timeline.json";
  {
    Timeline timeline(path.string(), 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) ScopedSpan span(timeline, "work");
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(timeline.event_count(), 4000u);
    const auto json = nlohmann::json::parse(timeline.to_json());
    std::set<int> tids;
    for (const auto& e : json["traceEvents"]) {
      if (e["ph"] == "X") tids.insert(e["tid"].get<int>());
    }
    EXPECT_EQ(tids.size(), 4u);
  }
  EXPECT_TRUE(fs::exists(path));  // written by the destructor
}

TEST(Timeline, DisabledRecordsNothing) {
  Timeline timeline;
  EXPECT_FALSE(timeline.enabled());
  { ScopedSpan span(timeline, "forward"); }
  timeline.add("x", 0, 1);
  EXPECT_EQ(timeline.event_count(), 0u);
  timeline.flush();  // no file, no error
}

}  // namespace
}  // namespace batchai::train
