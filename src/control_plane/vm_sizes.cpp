// The VM size table and the regional vCPU quota (docs/behaviour.md §1.3.7).
#include "vm_sizes.hpp"

#include <algorithm>

#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"

namespace batchai::control_plane {

namespace {

const std::vector<VmSize>& vm_table() {
  static const std::vector<VmSize> table = {
      {"Standard_NC6", "NC", 6, 1},           {"Standard_NC12", "NC", 12, 2},
      {"Standard_NC24", "NC", 24, 4},         {"Standard_NC24r", "NC", 24, 4},
      {"Standard_NC6s_v2", "NCSv2", 6, 1},    {"Standard_NC12s_v2", "NCSv2", 12, 2},
      {"Standard_NC24s_v2", "NCSv2", 24, 4},  {"Standard_NC24rs_v2", "NCSv2", 24, 4},
      {"Standard_NC6s_v3", "NCSv3", 6, 1},    {"Standard_NC12s_v3", "NCSv3", 12, 2},
      {"Standard_NC24s_v3", "NCSv3", 24, 4},  {"Standard_NC24rs_v3", "NCSv3", 24, 4},
      {"Standard_ND6s", "ND", 6, 1},          {"Standard_ND12s", "ND", 12, 2},
      {"Standard_ND24s", "ND", 24, 4},        {"Standard_ND24rs", "ND", 24, 4},
      {"Standard_NV6", "NV", 6, 1},           {"Standard_NV12", "NV", 12, 2},
      {"Standard_NV24", "NV", 24, 4},         {"Standard_D1", "D", 1, 0},
      {"Standard_D2", "D", 2, 0},             {"Standard_D3", "D", 4, 0},
      {"Standard_D4", "D", 8, 0},             {"Standard_D11", "D", 2, 0},
      {"Standard_D12", "D", 4, 0},            {"Standard_D13", "D", 8, 0},
      {"Standard_D14", "D", 16, 0},           {"Standard_D1_v2", "Dv2", 1, 0},
      {"Standard_D2_v2", "Dv2", 2, 0},        {"Standard_D3_v2", "Dv2", 4, 0},
      {"Standard_D4_v2", "Dv2", 8, 0},        {"Standard_D5_v2", "Dv2", 16, 0},
      {"Standard_D11_v2", "Dv2", 2, 0},       {"Standard_D12_v2", "Dv2", 4, 0},
      {"Standard_D13_v2", "Dv2", 8, 0},       {"Standard_D14_v2", "Dv2", 16, 0},
      {"Standard_D2_v3", "Dv3", 2, 0},        {"Standard_D4_v3", "Dv3", 4, 0},
      {"Standard_D8_v3", "Dv3", 8, 0},        {"Standard_D16_v3", "Dv3", 16, 0},
      {"Standard_D32_v3", "Dv3", 32, 0},      {"Standard_D64_v3", "Dv3", 64, 0},
      {"Standard_F1", "F", 1, 0},             {"Standard_F2", "F", 2, 0},
      {"Standard_F4", "F", 4, 0},             {"Standard_F8", "F", 8, 0},
      {"Standard_F16", "F", 16, 0},           {"Standard_F2s_v2", "FSv2", 2, 0},
      {"Standard_F4s_v2", "FSv2", 4, 0},      {"Standard_F8s_v2", "FSv2", 8, 0},
      {"Standard_F16s_v2", "FSv2", 16, 0},    {"Standard_F32s_v2", "FSv2", 32, 0},
      {"Standard_F64s_v2", "FSv2", 64, 0},    {"Standard_F72s_v2", "FSv2", 72, 0},
      {"Standard_A1", "A0-A7", 1, 0},         {"Standard_A2", "A0-A7", 2, 0},
      {"Standard_A3", "A0-A7", 4, 0},         {"Standard_A4", "A0-A7", 8, 0},
      {"Standard_E2_v3", "Ev3", 2, 0},        {"Standard_E4_v3", "Ev3", 4, 0},
      {"Standard_E8_v3", "Ev3", 8, 0},        {"Standard_E16_v3", "Ev3", 16, 0},
      {"Standard_H8", "H", 8, 0},             {"Standard_H16", "H", 16, 0},
  };
  return table;
}

}  // namespace

VmSize vm_size_info(const std::string& vm_size) {
  for (const auto& v : vm_table())
    if (iequals(v.name, vm_size)) return v;
  // Unknown: family = the letters after "Standard_" up to the first digit, 1 vCPU.
  std::string rest = vm_size;
  if (rest.size() > 9 && iequals(rest.substr(0, 9), "Standard_")) rest = rest.substr(9);
  std::string family;
  for (char c : rest) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    family += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return {vm_size, family.empty() ? "Other" : family, 1, 0};
}

const std::vector<std::string>& vm_families() {
  static const std::vector<std::string> families = [] {
    std::vector<std::string> out;
    for (const auto& v : vm_table())
      if (std::find(out.begin(), out.end(), v.family) == out.end()) out.push_back(v.family);
    return out;
  }();
  return families;
}

void check_regional_vcpu_quota(const std::string& location, bool low_priority, std::int64_t in_use,
                               std::int64_t requested) {
  if (requested <= 0 || in_use + requested <= kRegionalVcpuQuota) return;
  const std::string quota = low_priority ? "Total Cluster Low Priority Regional vCPUs" : "Total Cluster Dedicated Regional vCPUs";
  throw Conflict("Operation results in exceeding quota limits of " + quota + " in " + location +
                     ". Maximum allowed: " + std::to_string(kRegionalVcpuQuota) + ", Current in use: " +
                     std::to_string(in_use) + ", Additional requested: " + std::to_string(requested) +
                     ". Ask for fewer nodes or a smaller VM size, or shrink or delete other clusters (each counts its "
                     "target, or its auto-scale maximum; 'batchai list-usages -l " + location + "' shows the usage).",
                 "OperationNotAllowed");
}

std::int64_t max_nodes_within_quota(const std::string& vm_size) {
  return kRegionalVcpuQuota / std::max(1, vm_size_info(vm_size).vcpus);
}

}  // namespace batchai::control_plane
