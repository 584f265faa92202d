// The hostile values the sweep feeds to every command: paths and names, numbers, files and job
// documents. Values that would reach above the sandbox on a broken build are never used with a
// command that writes or deletes (a bare "/" goes only to commands that read).
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace batchai::sweep {

// {class, value}: the class names what the value tries (absolute, dotdot, symlink-out, ...).
using Corpus = std::vector<std::pair<std::string, std::string>>;

// Paths and names for any command. `decoy` is the decoy tree's absolute path; every value that
// climbs ends in the decoy, so even a broken build can only touch the sandbox.
inline Corpus path_corpus(const std::filesystem::path& decoy, bool reading) {
  const std::string d = decoy.string();
  Corpus c = {{"absolute", d},           {"absolute", d + "/"},       {"absolute", d + "/secret.txt"},
              {"absolute", d + "/link.txt"},
              {"dotdot", ".."},          {"dotdot", "../.."},         {"dotdot", "a/../../decoy"},
              {"dotdot", "d/../../../../../../decoy"},
              {"trailing-slash", "myshare/"}, {"trailing-slash", "cont/"}, {"trailing-slash", "d/"},
              {"trailing-slash", "d/a.txt/"}, {"trailing-slash", "a/b.txt/"},
              {"symlink-out", "out"},    {"symlink-out", "out/secret.txt"}, {"symlink-out", "out/sub"},
              {"symlink-out", "out/sub/b.txt"},
              {"symlink-in", "in"},      {"symlink-in", "in/a.txt"},
              {"dangling", "dangling"},  {"dangling", "dangling/x.txt"},
              {"odd-name", ""},          {"odd-name", "."},           {"odd-name", "./"},
              {"odd-name", "*"},         {"odd-name", "a b"},         {"odd-name", std::string(300, 'x')},
              {"odd-name", "%2e%2e"},    {"odd-name", "line\nbreak"}, {"odd-name", "a\\..\\..\\decoy"},
              {"odd-name", "-"}};
  std::string up;
  // Job folders sit ~17 levels under the sandbox; a write never climbs past the sandbox's parent.
  for (int depth = 1; depth <= (reading ? 20 : 5); ++depth) {
    up += "../";
    c.push_back({"dotdot", up + "decoy"});
    c.push_back({"dotdot", up + "decoy/secret.txt"});
  }
  if (reading) {
    c.push_back({"absolute", "/"});
    c.push_back({"absolute", "/etc/passwd"});
    c.push_back({"absolute", "/proc/self/environ"});
  }
  return c;
}

inline Corpus number_corpus() {
  return {{"negative", "-1"},           {"negative", "-2"},          {"negative", "-99999999999"},
          {"zero", "0"},                {"huge", "2147483647"},      {"huge", "2147483648"},
          {"huge", "4294967297"},       {"huge", "99999999999"},     {"huge", "1000000000"},
          {"huge", "20000"},            {"not-int", "1e3"},          {"not-int", "0x10"},
          {"not-int", "abc"},           {"not-int", ""},             {"not-int", "1.5"},
          {"not-int", " 1"}};
}

// Job documents ({"properties": ...}) that try counts, durations and paths out of bounds.
// `base` is a valid custom job on a one-node cluster; `decoy` the decoy's path.
inline Corpus job_document_corpus(const nlohmann::json& base, const std::filesystem::path& decoy) {
  using nlohmann::json;
  const std::string d = decoy.string();
  Corpus out;
  auto add = [&](const std::string& cls, const std::string& pointer, const json& value) {
    json doc = base;
    doc["properties"][json::json_pointer(pointer)] = value;
    out.push_back({cls, doc.dump()});
  };
  for (const json& n : {json(0), json(-1), json(2147483648LL), json(4294967297LL), json(99999999999LL), json(1.5),
                        json("1"), json(nullptr)})
    add("count", "/nodeCount", n);
  for (const json& n : {json(0), json(-1), json(2147483647), json(99999999999LL), json(1.5)}) {
    json doc = base;
    doc["properties"].erase("customToolkitSettings");
    doc["properties"]["customMpiSettings"] = {{"commandLine", "echo rank"}, {"processCount", n}};
    out.push_back({"count", doc.dump()});
  }
  for (const json& t : {json("P99999999999D"), json("PT-1S"), json("-1"), json("99999999:00:00"), json("P1000000D"),
                        json(123), json("")})
    add("duration", "/constraints/maxWallClockTime", t);
  for (const json& p : {json("normal"), json("superhigh"), json(7)}) add("enum", "/schedulingPriority", p);
  for (const json& p : {json(d), json("../../../../decoy"), json("$AZ_BATCHAI_JOB_MOUNT_ROOT/../../../../../../decoy"),
                        json("$AZ_BATCHAI_JOB_MOUNT_ROOT/afs/../../../../../../../decoy"), json("relative/x")})
    add("stdouterr-prefix", "/stdOutErrPathPrefix", p);
  for (const json& s : {json("../../../../../../decoy"), json(d), json("x/../../../../../../../../decoy")})
    add("output-dir", "/outputDirectories",
        json::array({{{"id", "OUT"}, {"pathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs"}, {"pathSuffix", s}}}));
  add("output-dir", "/outputDirectories",
      json::array({{{"id", "OUT"}, {"pathPrefix", d}}}));
  add("output-dir", "/outputDirectories", json::array({{{"id", "../x"}, {"pathPrefix", "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs"}}}));
  const json share = base["properties"]["mountVolumes"]["azureFileShares"][0];
  auto mount = [&](const std::string& field, const json& value) {
    json m = share;
    m[json::json_pointer(field)] = value;
    add("mount", "/mountVolumes", {{"azureFileShares", json::array({m})}});
  };
  mount("/relativeMountPath", "../../../../../../decoy");
  mount("/relativeMountPath", d);
  mount("/azureFileUrl", "https://acct.file.core.windows.net/../../../../decoy");
  mount("/azureFileUrl", "https://acct.file.core.windows.net/nosuchshare");
  mount("/accountName", "../../decoy");
  mount("/credentials/accountKey", "not-the-key");
  json blob = {{"accountName", "acct"}, {"containerName", "../../../../decoy"}, {"relativeMountPath", "bfs"},
               {"credentials", share["credentials"]}};
  add("mount", "/mountVolumes", {{"azureBlobFileSystems", json::array({blob})}});
  blob["containerName"] = "nosuchcontainer";
  add("mount", "/mountVolumes", {{"azureBlobFileSystems", json::array({blob})}});
  blob["containerName"] = "cont";
  blob["relativeMountPath"] = d;
  add("mount", "/mountVolumes", {{"azureBlobFileSystems", json::array({blob})}});
  add("mount", "/mountVolumes",
      {{"fileServers",
        json::array({{{"fileServer", {{"id", "/subscriptions/x/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/"
                                                 "ws/fileservers/../../../../../../decoy"}}},
                      {"relativeMountPath", "nfs"}}})}});
  add("env", "/environmentVariables", json::array({{{"name", "A=B"}, {"value", "x"}}}));
  add("env", "/environmentVariables", json::array({{{"name", "BIG"}, {"value", std::string(1 << 20, 'v')}}}));
  return out;
}

}  // namespace batchai::sweep
