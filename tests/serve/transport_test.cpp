// The transport's parts on their own: the connection registry's limits and who gives way, the
// worker pool's bound and stop, and how a request target is split and decoded.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "http/connection_registry.hpp"
#include "http/encoding.hpp"
#include "http/http_message.hpp"
#include "http/worker_pool.hpp"

namespace batchai::serve {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(ConnectionRegistry, PeerLimitEvictsThatPeersLongestIdle) {
  ConnectionRegistry r(100, 2);
  const auto t0 = Clock::now();
  std::vector<int> evicted;
  const auto a = r.open("1.1.1.1", t0, [&] { evicted.push_back(1); });
  const auto b = r.open("1.1.1.1", t0 + 1ms, [&] { evicted.push_back(2); });
  const auto other = r.open("2.2.2.2", t0 - 1s, [&] { evicted.push_back(9); });
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  ASSERT_NE(other, 0u);
  const auto c = r.open("1.1.1.1", t0 + 2ms, [&] { evicted.push_back(3); });
  EXPECT_NE(c, 0u);
  EXPECT_EQ(evicted, std::vector<int>{1});  // the peer's oldest, not the older one of another peer
  EXPECT_EQ(r.from_peer("1.1.1.1"), 2u);
  r.close(a);  // closing an evicted one later changes nothing
  EXPECT_EQ(r.size(), 3u);
}

TEST(ConnectionRegistry, BusyConnectionsNeverGiveWay) {
  ConnectionRegistry r(2, 10);
  const auto t0 = Clock::now();
  int evictions = 0;
  const auto a = r.open("p", t0, [&] { ++evictions; });
  const auto b = r.open("q", t0, [&] { ++evictions; });
  r.set_evictable(a, false, t0);
  r.set_evictable(b, false, t0);
  EXPECT_EQ(r.open("r", t0, [&] { ++evictions; }), 0u);  // refused: nobody can give way
  EXPECT_EQ(evictions, 0);
  r.set_evictable(b, true, t0 + 1s);
  EXPECT_NE(r.open("r", t0 + 2s, [&] { ++evictions; }), 0u);
  EXPECT_EQ(evictions, 1);
  EXPECT_EQ(r.size(), 2u);
}

// F411: among connections waiting on their peer, the one without progress longest gives way: a
// body trickled a byte at a time goes before one that is streaming or a fresh connection.
TEST(ConnectionRegistry, StalledPeerGivesWayNotTheBusiestOne) {
  ConnectionRegistry r(100, 3);
  const auto t0 = Clock::now();
  std::vector<int> evicted;
  const auto streaming = r.open("p", t0, [&] { evicted.push_back(1); });
  const auto trickling = r.open("p", t0 + 1ms, [&] { evicted.push_back(2); });
  const auto fresh = r.open("p", t0 + 3s, [&] { evicted.push_back(3); });
  ASSERT_NE(fresh, 0u);
  r.set_evictable(streaming, true, t0 + 1s);  // both reading their bodies
  r.set_evictable(trickling, true, t0 + 1s);
  r.touch(streaming, t0 + 3s);
  r.touch(trickling, t0 + 2s);
  EXPECT_NE(r.open("p", t0 + 3s, [] {}), 0u);
  EXPECT_EQ(evicted, std::vector<int>{2});
}

TEST(WorkerPool, QueueIsBoundedAndStopWaitsForRunningTasksOnly) {
  WorkerPool pool(1, 2);
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.try_post([&] {
    while (!release) std::this_thread::sleep_for(1ms);
    ++ran;
  }));
  std::this_thread::sleep_for(20ms);  // the worker took it
  EXPECT_TRUE(pool.try_post([&] { ++ran; }));
  EXPECT_TRUE(pool.try_post([&] { ++ran; }));
  EXPECT_FALSE(pool.try_post([&] { ++ran; })) << "the queue holds 2";
  const auto start = Clock::now();
  EXPECT_FALSE(pool.stop(100ms)) << "the running task is still running";
  EXPECT_LT(Clock::now() - start, 1s);
  EXPECT_FALSE(pool.try_post([&] { ++ran; })) << "stopped";
  release = true;
  EXPECT_TRUE(pool.stop(2s));
  EXPECT_EQ(ran, 1) << "the queued tasks were dropped at stop";
}

TEST(WorkerPool, ThrowingTaskKeepsTheWorker) {
  WorkerPool pool(1, 4);
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.try_post([] { throw std::runtime_error("x"); }));
  ASSERT_TRUE(pool.try_post([&] { ++ran; }));
  for (int i = 0; i < 200 && ran == 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(ran, 1);
}

TEST(HttpMessage, TargetIsSplitAndDecoded) {
  std::string path;
  std::multimap<std::string, std::string> params;
  ASSERT_TRUE(split_target("/a%20b/c%2Fd?x=1+2&y=%41&flag&&z=", path, params));
  EXPECT_EQ(path, "/a b/c/d");
  EXPECT_EQ(params.find("x")->second, "1 2");
  EXPECT_EQ(params.find("y")->second, "A");
  EXPECT_EQ(params.count("flag"), 1u);
  EXPECT_EQ(params.find("z")->second, "");
  EXPECT_FALSE(split_target("/bad%zz", path, params));
  EXPECT_FALSE(split_target("/bad%4", path, params));
  EXPECT_EQ(*percent_decode("a+b", false), "a+b");
  EXPECT_EQ(*percent_decode("%c0%af", false), std::string("\xc0\xaf"));
}

TEST(HttpMessage, HeadersAreCaseInsensitiveAndInjectionProof) {
  HttpRequest req;
  req.headers.emplace("X-Ms-Range", "bytes=1-2");
  EXPECT_TRUE(req.has_header("x-ms-range"));
  EXPECT_EQ(req.get_header_value("X-MS-RANGE"), "bytes=1-2");
  HttpResponse res;
  res.set_header("ETag", "a");
  res.set_header("etag", "b");
  EXPECT_EQ(res.headers.count("ETAG"), 1u);
  EXPECT_EQ(res.headers.find("etag")->second, "b");
  res.set_header("X-Evil", "a\r\nSet-Cookie: x");
  EXPECT_EQ(res.headers.count("X-Evil"), 0u);
}

}  // namespace
}  // namespace batchai::serve
