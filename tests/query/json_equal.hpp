// Test helper: JSON equality as the JMESPath compliance suite means it (numbers by value, so
// 1 == 1.0; object keys in any order; true is not 1).
#pragma once
#include <nlohmann/json.hpp>

namespace batchai::query::testing {

template <typename JsonA, typename JsonB>
bool json_equal(const JsonA& a, const JsonB& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) return a.template get<double>() == b.template get<double>();
    if (a.is_number_unsigned() || b.is_number_unsigned()) {
      if (a.is_number_unsigned() && b.is_number_unsigned()) {
        return a.template get<std::uint64_t>() == b.template get<std::uint64_t>();
      }
      const auto& s = a.is_number_unsigned() ? b : a;  // the signed one
      const auto& u = a.is_number_unsigned() ? a : b;
      return s.template get<std::int64_t>() >= 0 &&
             static_cast<std::uint64_t>(s.template get<std::int64_t>()) == u.template get<std::uint64_t>();
    }
    return a.template get<std::int64_t>() == b.template get<std::int64_t>();
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!json_equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto found = b.find(it.key());
      if (found == b.end() || !json_equal(it.value(), *found)) return false;
    }
    return true;
  }
  if (a.is_string() && b.is_string()) return a.template get<std::string>() == b.template get<std::string>();
  if (a.is_boolean() && b.is_boolean()) return a.template get<bool>() == b.template get<bool>();
  return a.is_null() && b.is_null();
}

}  // namespace batchai::query::testing
