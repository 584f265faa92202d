// JSON a job wrote, parsed for the dashboard under a budget (bounded_json.hpp, issue 53 F404):
// 4 MiB of nested '[' cost ~300 MB as a document before; now it is refused at the depth bound
// having allocated next to nothing. Heap use is counted by this binary's operator new.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "ui/bounded_json.hpp"

namespace {
std::atomic<std::size_t> g_live{0}, g_peak{0};
}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  const std::size_t live = g_live += malloc_usable_size(p);
  for (std::size_t peak = g_peak; live > peak && !g_peak.compare_exchange_weak(peak, live);) {
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  g_live -= malloc_usable_size(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace batchai::serve {
namespace {

constexpr JsonBudget kBudget{4 * 1024 * 1024, 16, 100000};

// The heap the parse took at its peak, beyond what was live before it.
std::size_t peak_of(const std::string& text, std::optional<Json>& out) {
  const std::size_t before = g_live;
  g_peak = before;
  out = parse_bounded_json(text, kBudget);
  return g_peak - before;
}

TEST(BoundedJson, NestedBracketsAreRefusedCheaply) {
  const std::string text(4 * 1024 * 1024, '[');
  std::optional<Json> doc;
  const std::size_t peak = peak_of(text, doc);
  EXPECT_FALSE(doc.has_value());
  EXPECT_LT(peak, 64 * 1024) << "bytes allocated at the peak";
}

TEST(BoundedJson, TooManyValuesAreRefusedWithinTheirBudget) {
  std::string text = "[";
  for (int i = 0; i < 2'000'000; ++i) text += "0,";
  text += "0]";  // 4 MB of numbers: 20 times the values allowed
  std::optional<Json> doc;
  const std::size_t peak = peak_of(text, doc);
  EXPECT_FALSE(doc.has_value());
  EXPECT_LT(peak, 8u * 1024 * 1024) << "bytes allocated at the peak";
}

TEST(BoundedJson, DocumentsWithinTheBudgetParseAsBefore) {
  const std::string text = R"({"epochs": [{"epoch": 1, "loss": 2.5, "acc": null, "ok": true, "name": "a\u00e9"}],)"
                           R"( "n": -3, "u": 18446744073709551615})";
  const auto doc = parse_bounded_json(text, kBudget);
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(*doc, Json::parse(text));
  // Exactly at the bounds: 16 containers deep, and as many values as allowed.
  EXPECT_TRUE(parse_bounded_json(std::string(16, '[') + std::string(16, ']'), kBudget).has_value());
  EXPECT_FALSE(parse_bounded_json(std::string(17, '[') + std::string(17, ']'), kBudget).has_value());
  EXPECT_TRUE(parse_bounded_json("[1,2,3]", {100, 4, 4}).has_value());
  EXPECT_FALSE(parse_bounded_json("[1,2,3,4]", {100, 4, 4}).has_value());
  EXPECT_FALSE(parse_bounded_json("[1,2,3]", {6, 4, 4}).has_value()) << "7 bytes against a bound of 6";
  for (const char* bad : {"", "[", "{\"a\":}", "[1,]", "nul", "{\"a\" 1}", "[1] x"})
    EXPECT_FALSE(parse_bounded_json(bad, kBudget).has_value()) << bad;
}

}  // namespace
}  // namespace batchai::serve
