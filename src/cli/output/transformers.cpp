// Table transformers of docs/output.md §2.3 (the 2018-05-01 module's _format.py, rewritten).
// Each is written once over the JSON type: the ordered form serves --query results and the
// tests, the sorted form reads the control plane's documents without an ordered copy.
#include "output/transformers.hpp"

#include <string>

namespace batchai::cli::output {
namespace {

template <typename J, typename RowFn>
OJson each(const J& result, RowFn row) {
  OJson rows = OJson::array();
  if (result.is_array()) {
    rows.get_ref<OJson::array_t&>().reserve(result.size());
    for (const auto& item : result) rows.push_back(row(item));
  } else if (!result.is_null()) {
    rows.push_back(row(result));
  }
  return rows;
}

// The member `key`, or a null that lives as long as the program (missing key or not an object).
template <typename J>
const J& get(const J& item, const char* key) {
  static const J kNull = nullptr;
  if (!item.is_object()) return kNull;
  auto it = item.find(key);
  return it == item.end() ? kNull : *it;
}

template <typename J>
std::string text(const J& v) {
  if (v.is_string()) return v.template get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.template get<bool>() ? "True" : "False";
  return v.dump();
}

// The path segment after "workspaces/" in an ARM id.
template <typename J>
OJson workspace_of(const J& id) {
  if (!id.is_string()) return nullptr;
  const std::string& s = id.template get_ref<const std::string&>();
  std::string lower = s;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto pos = lower.find("/workspaces/");
  if (pos == std::string::npos) return nullptr;
  pos += 12;
  return s.substr(pos, s.find('/', pos) == std::string::npos ? std::string::npos : s.find('/', pos) - pos);
}

template <typename J>
OJson last_segment(const J& id) {
  if (!id.is_string()) return nullptr;
  const std::string& s = id.template get_ref<const std::string&>();
  return s.substr(s.rfind('/') + 1);
}

template <typename J>
bool is_zero_or_null(const J& v) {
  return v.is_null() || (v.is_number() && v.template get<double>() == 0.0);
}


template <typename J>
OJson workspace_rows(const J& result) {
  return each(result, [](const J& w) {
    OJson row = OJson::object();
    row["Name"] = get(w, "name");
    row["Resource Group"] = get(w, "resourceGroup");
    row["Location"] = get(w, "location");
    row["State"] = get(w, "provisioningState");
    return row;
  });
}

template <typename J>
OJson cluster_rows(const J& result) {
  return each(result, [](const J& c) {
    OJson row = OJson::object();
    row["Name"] = get(c, "name");
    row["Resource Group"] = get(c, "resourceGroup");
    row["Workspace"] = workspace_of(get(c, "id"));
    row["VM Size"] = get(c, "vmSize");
    row["State"] = get(c, "provisioningState") == "deleting" ? OJson("deleting") : OJson(get(c, "allocationState"));
    const J& counts = get(c, "nodeStateCounts");
    row["Idle"] = text(get(counts, "idleNodeCount"));
    row["Running"] = text(get(counts, "runningNodeCount"));
    row["Preparing"] = text(get(counts, "preparingNodeCount"));
    row["Leaving"] = text(get(counts, "leavingNodeCount"));
    row["Unusable"] = text(get(counts, "unusableNodeCount"));
    return row;
  });
}

template <typename J>
OJson experiment_rows(const J& result) {
  return each(result, [](const J& e) {
    OJson row = OJson::object();
    row["Name"] = get(e, "name");
    row["Resource Group"] = get(e, "resourceGroup");
    row["Workspace"] = workspace_of(get(e, "id"));
    row["State"] = get(e, "provisioningState");
    return row;
  });
}

template <typename J>
OJson job_rows(const J& result) {
  return each(result, [](const J& j) {
    OJson row = OJson::object();
    const J& cluster = get(j, "cluster");
    row["Name"] = get(j, "name");
    row["Cluster"] = last_segment(get(cluster, "id"));
    row["Cluster RG"] = get(cluster, "resourceGroup");
    row["Cluster Workspace"] = workspace_of(get(cluster, "id"));
    row["Tool"] = get(j, "toolType");
    row["Nodes"] = get(j, "nodeCount");
    row["State"] = get(j, "provisioningState") == "deleting" ? OJson("deleting") : OJson(get(j, "executionState"));
    const J& exit_code = get(get(j, "executionInfo"), "exitCode");
    row["Exit code"] = exit_code.is_null() ? std::string() : text(exit_code);
    return row;
  });
}

template <typename J>
OJson job_file_rows(const J& result) {
  return each(result, [](const J& f) {
    OJson row = OJson::object();
    row["Name"] = get(f, "name");
    row["Type"] = get(f, "fileType");
    row["Size"] = get(f, "fileType") == "directory" ? std::string() : text(get(f, "contentLength"));
    const J& modified = get(f, "lastModified");
    row["Modified"] = modified.is_null() ? OJson(" ") : OJson(modified);
    return row;
  });
}

template <typename J>
OJson file_server_rows(const J& result) {
  return each(result, [](const J& f) {
    OJson row = OJson::object();
    row["Name"] = get(f, "name");
    row["Resource Group"] = get(f, "resourceGroup");
    row["Size"] = get(f, "vmSize");
    const J& disks = get(f, "dataDisks");
    if (!disks.is_null()) {
      row["Disks"] = text(get(disks, "diskCount")) + " x " + text(get(disks, "diskSizeInGb")) + " Gb";
    }
    const J& mount = get(f, "mountSettings");
    if (!mount.is_null()) {
      row["Public IP"] = get(mount, "fileServerPublicIp");
      row["Internal IP"] = get(mount, "fileServerInternalIp");
      row["Mount Point"] = get(mount, "mountPoint");
    }
    return row;
  });
}

template <typename J>
OJson remote_login_rows(const J& result) {
  return each(result, [](const J& n) {
    OJson row = OJson::object();
    row["ID"] = get(n, "nodeId");
    row["IP"] = get(n, "ipAddress");
    const J& port = get(n, "port");
    row["SSH Port"] = port.is_number() ? OJson(static_cast<long long>(port.template get<double>())) : OJson(port);
    return row;
  });
}

template <typename J>
OJson setup_file_rows(const J& result) {
  return each(result, [](const J& f) {
    OJson row = OJson::object();
    row["Name"] = get(f, "name");
    row["Is directory"] = get(f, "is_directory") == true ? "yes" : "no";
    const J& size = get(f, "size");
    row["Size"] = size.is_null() ? OJson(std::string()) : OJson(size);
    return row;
  });
}

template <typename J>
OJson usage_rows(const J& result) {
  return each(result, [](const J& u) {
    OJson row = OJson::object();
    row["Value"] = get(get(u, "name"), "localizedValue");
    const J& current = get(u, "currentValue");
    const J& limit = get(u, "limit");
    row["Usage"] = is_zero_or_null(current) ? OJson("0") : OJson(current);
    row["Limit"] = is_zero_or_null(limit) ? OJson("0") : OJson(limit);
    return row;
  });
}

}  // namespace

OJson workspace_table(const OJson& result) { return workspace_rows(result); }
OJson cluster_table(const OJson& result) { return cluster_rows(result); }
OJson experiment_table(const OJson& result) { return experiment_rows(result); }
OJson job_table(const OJson& result) { return job_rows(result); }
const std::vector<std::string> kJobTableFields = {"name",           "cluster",           "toolType",      "nodeCount",
                                                  "executionState", "provisioningState", "executionInfo"};
OJson job_file_table(const OJson& result) { return job_file_rows(result); }
OJson file_server_table(const OJson& result) { return file_server_rows(result); }
OJson remote_login_table(const OJson& result) { return remote_login_rows(result); }
OJson setup_file_table(const OJson& result) { return setup_file_rows(result); }
OJson usage_table(const OJson& result) { return usage_rows(result); }

std::optional<OJson> transform_sorted(const TableTransformer& transformer, const Json& result) {
  using Ordered = OJson (*)(const OJson&);
  using Sorted = OJson (*)(const Json&);
  static const std::pair<Ordered, Sorted> kTwins[] = {
      {&workspace_table, &workspace_rows<Json>},
      {&cluster_table, &cluster_rows<Json>},
      {&experiment_table, &experiment_rows<Json>},
      {&job_table, &job_rows<Json>},
      {&job_file_table, &job_file_rows<Json>},
      {&file_server_table, &file_server_rows<Json>},
      {&remote_login_table, &remote_login_rows<Json>},
      {&setup_file_table, &setup_file_rows<Json>},
      {&usage_table, &usage_rows<Json>},
  };
  const Ordered* fn = transformer.target<Ordered>();
  if (fn == nullptr) return std::nullopt;
  for (const auto& [ordered, sorted] : kTwins) {
    if (*fn == ordered) return sorted(result);
  }
  return std::nullopt;
}

}  // namespace batchai::cli::output
