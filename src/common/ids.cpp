// ARM id building/parsing, name validation and random identifiers.
#include "batchai/common/ids.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <random>

#include "batchai/common/errors.hpp"

namespace batchai {
namespace {

std::vector<std::string> split_path(std::string_view id) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : id) {
    if (c == '/') {
      if (!current.empty()) parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

std::mt19937_64& rng() {
  thread_local std::mt19937_64 engine(std::random_device{}());
  return engine;
}

}  // namespace

std::string subscription_id() {
  if (const char* s = std::getenv("BATCHAI_SUBSCRIPTION_ID"); s && *s) return s;
  return "00000000-0000-0000-0000-000000000000";
}

std::string arm_id(std::string_view subscription, std::string_view resource_group,
                   const std::vector<std::pair<std::string, std::string>>& path,
                   std::string_view provider) {
  std::string id = "/subscriptions/" + std::string(subscription) + "/resourceGroups/" +
                   std::string(resource_group);
  if (!path.empty() && !provider.empty()) id += "/providers/" + std::string(provider);
  for (const auto& [type, name] : path) id += "/" + type + "/" + name;
  return id;
}

std::optional<std::string> ParsedId::name_of(std::string_view type) const {
  for (const auto& [t, n] : path)
    if (iequals(t, type)) return n;
  return std::nullopt;
}

std::optional<ParsedId> parse_arm_id(std::string_view id) {
  if (id.empty() || id.front() != '/') return std::nullopt;
  auto parts = split_path(id);
  if (parts.size() < 4 || !iequals(parts[0], "subscriptions") || !iequals(parts[2], "resourceGroups"))
    return std::nullopt;
  ParsedId out;
  out.subscription = parts[1];
  out.resource_group = parts[3];
  std::size_t i = 4;
  if (i < parts.size()) {
    if (!iequals(parts[i], "providers") || i + 1 >= parts.size()) return std::nullopt;
    out.provider = parts[i + 1];
    i += 2;
  }
  if ((parts.size() - i) % 2 != 0) return std::nullopt;
  for (; i < parts.size(); i += 2) out.path.emplace_back(parts[i], parts[i + 1]);
  return out;
}

bool looks_like_arm_id(std::string_view text) { return parse_arm_id(text).has_value(); }

void validate_resource_name(std::string_view name, std::string_view parameter, std::size_t max_len) {
  const std::string p(parameter);
  if (name.empty())
    throw InvalidArgument("validation error: Parameter '" + p + "' must have length greater than 1.");
  if (name.size() > max_len)
    throw InvalidArgument("validation error: Parameter '" + p + "' must have length less than " +
                          std::to_string(max_len) + ".");
  bool ok = std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_';
  });
  if (!ok)
    throw InvalidArgument("validation error: Parameter '" + p +
                          "' must conform to the following pattern: '^[-\\\\w_]+$'.");
}

std::string new_uuid() {
  std::uniform_int_distribution<int> hex(0, 15);
  const char* digits = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      out += '-';
    } else if (i == 14) {
      out += '4';
    } else if (i == 19) {
      out += digits[8 + hex(rng()) % 4];
    } else {
      out += digits[hex(rng())];
    }
  }
  return out;
}

std::string random_string(std::size_t n, std::string_view alphabet) {
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += alphabet[pick(rng())];
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace batchai
