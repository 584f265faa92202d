// `-o json|jsonc|tsv|yaml|none`: the text forms of docs/output.md §2.1 rule 8 and §2.4.
#include <gtest/gtest.h>

#include "batchai/common/errors.hpp"
#include "output/formats.hpp"

namespace batchai::cli::output {
namespace {

TEST(JsonTest, SortedKeysTwoSpaceIndentAsciiEscapes) {
  OJson doc = OJson::parse(R"({"b": 1, "a": {"y": null, "x": "é"}, "c": []})");
  EXPECT_EQ(render_json(doc), "{\n  \"a\": {\n    \"x\": \"\\u00e9\",\n    \"y\": null\n  },\n  \"b\": 1,\n  \"c\": []\n}\n");
}

TEST(JsonTest, StringResultPrintsQuoted) { EXPECT_EQ(render_json(OJson("S/rg/x")), "\"S/rg/x\"\n"); }

TEST(JsonTest, JsoncWithoutColourEqualsJson) {
  OJson doc = OJson::parse(R"({"a": 1})");
  EXPECT_EQ(render_jsonc(doc, false), render_json(doc));
  std::string coloured = render_jsonc(doc, true);
  EXPECT_NE(coloured.find("\x1b["), std::string::npos);
}

TEST(TsvTest, ObjectRowsFollowKnackRules) {
  OJson doc = OJson::parse(R"({"a": "text", "b": null, "c": [1, 2, 3], "d": {"x": 1}, "e": true, "f": 2.5, "g": 7})");
  EXPECT_EQ(render_tsv(doc), "text\tNone\t3\t\tTrue\t2.5\t7\n");
}

TEST(TsvTest, ListOfRowsAndScalars) {
  OJson list = OJson::parse(R"([{"n": "a"}, {"n": "b"}])");
  EXPECT_EQ(render_tsv(list), "a\nb\n");
  EXPECT_EQ(render_tsv(OJson("queued")), "queued\n");
  EXPECT_EQ(render_tsv(OJson(true)), "true\n");
  EXPECT_EQ(render_tsv(OJson(false)), "false\n");
  EXPECT_EQ(render_tsv(OJson(3)), "3\n");
  EXPECT_EQ(render_tsv(OJson::array()), "");
}

TEST(TsvTest, ProjectionOrderIsKept) {
  OJson doc = OJson::object();
  doc["z"] = "1";
  doc["a"] = "2";
  EXPECT_EQ(render_tsv(doc), "1\t2\n");
}

TEST(YamlTest, BlockStyleSortedWithNullsAndQuotedAmbiguousStrings) {
  OJson doc = OJson::parse(R"({"name": "ws", "tags": null, "mode": "0777", "list": [], "obj": {}, "items": [1, "a"], "ok": true})");
  EXPECT_EQ(render_yaml(doc, false),
            "items:\n  - 1\n  - a\nlist: []\nmode: '0777'\nname: ws\nobj: {}\nok: true\ntags: null\n");
}

TEST(RenderTest, NoneFormatPrintsNothing) {
  RenderOptions options;
  options.format = Format::kNone;
  EXPECT_EQ(render(OJson::parse(R"({"a": 1})"), options), "");
}

TEST(RenderTest, FormatNamesParseAndBadOneIsAUsageError) {
  for (const auto& name : format_names()) EXPECT_NO_THROW(parse_format(name));
  EXPECT_THROW(parse_format("xml"), UsageError);
}

TEST(RenderTest, OrderedRoundTripKeepsValues) {
  Json doc = Json::parse(R"({"b": [1, {"d": 2.5, "c": null}], "a": "x"})");
  OJson ordered = to_ordered(doc);
  EXPECT_EQ(ordered.begin().key(), "a");
  EXPECT_EQ(to_sorted(ordered), doc);
}

}  // namespace
}  // namespace batchai::cli::output
