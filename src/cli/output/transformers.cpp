// Table transformers of spec §2.3 (the 2018-05-01 module's _format.py, rewritten).
#include "output/transformers.hpp"

#include <string>

namespace batchai::cli::output {
namespace {

template <typename RowFn>
OJson each(const OJson& result, RowFn row) {
  OJson rows = OJson::array();
  if (result.is_array()) {
    for (const auto& item : result) rows.push_back(row(item));
  } else if (!result.is_null()) {
    rows.push_back(row(result));
  }
  return rows;
}

OJson get(const OJson& item, const char* key) {
  if (!item.is_object()) return nullptr;
  auto it = item.find(key);
  return it == item.end() ? OJson(nullptr) : *it;
}

std::string text(const OJson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

// The path segment after "workspaces/" in an ARM id.
OJson workspace_of(const OJson& id) {
  if (!id.is_string()) return nullptr;
  const std::string& s = id.get_ref<const std::string&>();
  std::string lower = s;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto pos = lower.find("/workspaces/");
  if (pos == std::string::npos) return nullptr;
  pos += 12;
  return s.substr(pos, s.find('/', pos) == std::string::npos ? std::string::npos : s.find('/', pos) - pos);
}

OJson last_segment(const OJson& id) {
  if (!id.is_string()) return nullptr;
  const std::string& s = id.get_ref<const std::string&>();
  return s.substr(s.rfind('/') + 1);
}

bool is_zero_or_null(const OJson& v) { return v.is_null() || (v.is_number() && v.get<double>() == 0.0); }

}  // namespace

OJson workspace_table(const OJson& result) {
  return each(result, [](const OJson& w) {
    OJson row = OJson::object();
    row["Name"] = get(w, "name");
    row["Resource Group"] = get(w, "resourceGroup");
    row["Location"] = get(w, "location");
    row["State"] = get(w, "provisioningState");
    return row;
  });
}

OJson cluster_table(const OJson& result) {
  return each(result, [](const OJson& c) {
    OJson row = OJson::object();
    row["Name"] = get(c, "name");
    row["Resource Group"] = get(c, "resourceGroup");
    row["Workspace"] = workspace_of(get(c, "id"));
    row["VM Size"] = get(c, "vmSize");
    row["State"] = get(c, "provisioningState") == "deleting" ? OJson("deleting") : get(c, "allocationState");
    OJson counts = get(c, "nodeStateCounts");
    row["Idle"] = text(get(counts, "idleNodeCount"));
    row["Running"] = text(get(counts, "runningNodeCount"));
    row["Preparing"] = text(get(counts, "preparingNodeCount"));
    row["Leaving"] = text(get(counts, "leavingNodeCount"));
    row["Unusable"] = text(get(counts, "unusableNodeCount"));
    return row;
  });
}

OJson experiment_table(const OJson& result) {
  return each(result, [](const OJson& e) {
    OJson row = OJson::object();
    row["Name"] = get(e, "name");
    row["Resource Group"] = get(e, "resourceGroup");
    row["Workspace"] = workspace_of(get(e, "id"));
    row["State"] = get(e, "provisioningState");
    return row;
  });
}

OJson job_table(const OJson& result) {
  return each(result, [](const OJson& j) {
    OJson row = OJson::object();
    OJson cluster = get(j, "cluster");
    row["Name"] = get(j, "name");
    row["Cluster"] = last_segment(get(cluster, "id"));
    row["Cluster RG"] = get(cluster, "resourceGroup");
    row["Cluster Workspace"] = workspace_of(get(cluster, "id"));
    row["Tool"] = get(j, "toolType");
    row["Nodes"] = get(j, "nodeCount");
    row["State"] = get(j, "provisioningState") == "deleting" ? OJson("deleting") : get(j, "executionState");
    OJson info = get(j, "executionInfo");
    OJson exit_code = get(info, "exitCode");
    row["Exit code"] = exit_code.is_null() ? std::string() : text(exit_code);
    return row;
  });
}

OJson job_file_table(const OJson& result) {
  return each(result, [](const OJson& f) {
    OJson row = OJson::object();
    row["Name"] = get(f, "name");
    row["Type"] = get(f, "fileType");
    row["Size"] = get(f, "fileType") == "directory" ? std::string() : text(get(f, "contentLength"));
    OJson modified = get(f, "lastModified");
    row["Modified"] = modified.is_null() ? OJson(" ") : modified;
    return row;
  });
}

OJson file_server_table(const OJson& result) {
  return each(result, [](const OJson& f) {
    OJson row = OJson::object();
    row["Name"] = get(f, "name");
    row["Resource Group"] = get(f, "resourceGroup");
    row["Size"] = get(f, "vmSize");
    OJson disks = get(f, "dataDisks");
    if (!disks.is_null()) {
      row["Disks"] = text(get(disks, "diskCount")) + " x " + text(get(disks, "diskSizeInGb")) + " Gb";
    }
    OJson mount = get(f, "mountSettings");
    if (!mount.is_null()) {
      row["Public IP"] = get(mount, "fileServerPublicIp");
      row["Internal IP"] = get(mount, "fileServerInternalIp");
      row["Mount Point"] = get(mount, "mountPoint");
    }
    return row;
  });
}

OJson remote_login_table(const OJson& result) {
  return each(result, [](const OJson& n) {
    OJson row = OJson::object();
    row["ID"] = get(n, "nodeId");
    row["IP"] = get(n, "ipAddress");
    OJson port = get(n, "port");
    row["SSH Port"] = port.is_number() ? OJson(static_cast<long long>(port.get<double>())) : port;
    return row;
  });
}

OJson setup_file_table(const OJson& result) {
  return each(result, [](const OJson& f) {
    OJson row = OJson::object();
    row["Name"] = get(f, "name");
    row["Is directory"] = get(f, "is_directory") == true ? "yes" : "no";
    OJson size = get(f, "size");
    row["Size"] = size.is_null() ? OJson(std::string()) : size;
    return row;
  });
}

OJson usage_table(const OJson& result) {
  return each(result, [](const OJson& u) {
    OJson row = OJson::object();
    row["Value"] = get(get(u, "name"), "localizedValue");
    OJson current = get(u, "currentValue");
    OJson limit = get(u, "limit");
    row["Usage"] = is_zero_or_null(current) ? OJson("0") : current;
    row["Limit"] = is_zero_or_null(limit) ? OJson("0") : limit;
    return row;
  });
}

}  // namespace batchai::cli::output
