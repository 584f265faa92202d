// Draft-4 JSON Schema validation with jsonschema-style messages and dotted error paths.
#include "batchai/common/json_schema.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <regex>
#include <unordered_map>

#include "batchai/common/errors.hpp"

namespace batchai {
namespace {

constexpr const char* kArmExpressionRef =
    "https://schema.management.azure.com/schemas/2015-01-01/deploymentTemplate.json#/definitions/expression";
constexpr int kMaxRefDepth = 64;

// The ARM template "expression" definition, known offline: a string such as "[concat(...)]".
const Json& arm_expression_schema() {
  static const Json schema = {{"type", "string"}, {"pattern", "^\\[([^\\[].*)?\\]$"}};
  return schema;
}

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool has_type(const Json& instance, const std::string& type) {
  if (type == "object") return instance.is_object();
  if (type == "array") return instance.is_array();
  if (type == "string") return instance.is_string();
  if (type == "boolean") return instance.is_boolean();
  if (type == "null") return instance.is_null();
  if (type == "number") return instance.is_number();
  // Draft 4: a number with a fraction or exponent (1.0 included) is not an integer.
  if (type == "integer") return instance.is_number_integer();
  return true;  // unknown type names constrain nothing
}

bool type_matches(const Json& type_keyword, const Json& instance) {
  if (type_keyword.is_string()) return has_type(instance, type_keyword.get<std::string>());
  if (type_keyword.is_array()) {
    for (const auto& t : type_keyword) {
      if (t.is_string() && has_type(instance, t.get<std::string>())) return true;
    }
    return false;
  }
  return true;
}

double as_double(const Json& n) { return n.get<double>(); }

// Length in Unicode code points (minLength/maxLength count characters, not bytes).
std::size_t utf8_length(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string python_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == quote) out += std::string("\\") + quote;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + quote;
}

std::string repr_full(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "None";
    case Json::value_t::boolean: return v.get<bool>() ? "True" : "False";
    case Json::value_t::string: return python_string(v.get<std::string>());
    case Json::value_t::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + repr_full(v[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, item] : v.items()) {
        out += (first ? "" : ", ") + python_string(k) + ": " + repr_full(item);
        first = false;
      }
      return out + "}";
    }
    default: return v.dump();
  }
}

std::string unescape_pointer_token(std::string token) {
  std::string decoded;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '%' && i + 2 < token.size()) {
      decoded += static_cast<char>(std::stoi(token.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += token[i];
    }
  }
  std::string out;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    if (decoded[i] == '~' && i + 1 < decoded.size() && (decoded[i + 1] == '0' || decoded[i + 1] == '1')) {
      out += decoded[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      out += decoded[i];
    }
  }
  return out;
}

const std::regex& cached_regex(const std::string& pattern) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::regex> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(pattern);
  if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return it->second;
}

bool regex_search(const std::string& pattern, const std::string& text) {
  try {
    return std::regex_search(text, cached_regex(pattern));
  } catch (const std::regex_error&) {
    return true;  // a pattern we cannot compile constrains nothing (jsonschema's format behaviour)
  }
}

}  // namespace

struct JsonSchema::Context {
  std::vector<SchemaViolation> errors;
  int depth = 0;
};

std::string SchemaViolation::to_string() const { return path.empty() ? message : path + ": " + message; }

std::string python_repr(const Json& value) {
  std::string full = repr_full(value);
  constexpr std::size_t kMax = 80;
  if (full.size() <= kMax) return full;
  return full.substr(0, kMax - 3) + "...";
}

JsonSchema::JsonSchema(Json schema) : schema_(std::move(schema)) {}

JsonSchema JsonSchema::load(const std::filesystem::path& file) { return JsonSchema(load_json_file(file)); }

void JsonSchema::relax_required(const std::string& definition, const std::string& property) {
  auto defs = schema_.find("definitions");
  if (defs == schema_.end() || !defs->contains(definition)) {
    throw InvalidArgument("schema has no definition '" + definition + "' to relax");
  }
  Json& def = (*defs)[definition];
  if (!def.contains("required")) return;
  Json kept = Json::array();
  for (const auto& r : def["required"]) {
    if (r != property) kept.push_back(r);
  }
  def["required"] = kept;
}

std::vector<SchemaViolation> JsonSchema::validate(const Json& instance) const {
  Context ctx;
  check(schema_, instance, "", ctx);
  return ctx.errors;
}

void JsonSchema::validate_or_throw(const Json& instance, const std::string& what) const {
  auto errors = validate(instance);
  if (errors.empty()) return;
  std::string message = what + " does not match the schema: ";
  for (std::size_t i = 0; i < errors.size() && i < 5; ++i) message += (i ? "; " : "") + errors[i].to_string();
  if (errors.size() > 5) message += "; and " + std::to_string(errors.size() - 5) + " more";
  throw InvalidArgument(message + ". Fix the file and try again.");
}

const Json& JsonSchema::resolve(const std::string& ref, const std::string& path, Context& ctx) const {
  static const Json kAnything = Json::object();
  if (ref == kArmExpressionRef) return arm_expression_schema();
  if (ref.empty() || ref[0] != '#') {
    ctx.errors.push_back({path, "cannot resolve the external reference " + python_string(ref) + " offline"});
    return kAnything;
  }
  const Json* node = &schema_;
  std::string pointer = ref.substr(1);
  std::size_t pos = 0;
  while (pos < pointer.size()) {
    if (pointer[pos] != '/') break;
    std::size_t next = pointer.find('/', pos + 1);
    std::string token = unescape_pointer_token(pointer.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1));
    if (node->is_object() && node->contains(token)) {
      node = &(*node)[token];
    } else if (node->is_array() && !token.empty() &&
               std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
               std::stoul(token) < node->size()) {
      node = &(*node)[std::stoul(token)];
    } else {
      ctx.errors.push_back({path, "unresolvable reference " + python_string(ref) + " in the schema"});
      return kAnything;
    }
    pos = next == std::string::npos ? pointer.size() : next;
  }
  return *node;
}

void JsonSchema::check(const Json& schema, const Json& instance, const std::string& path, Context& ctx) const {
  if (!schema.is_object()) return;
  if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
    // Draft 4: a $ref replaces its siblings.
    if (ctx.depth >= kMaxRefDepth) {
      ctx.errors.push_back({path, "schema references nest deeper than " + std::to_string(kMaxRefDepth) + " levels"});
      return;
    }
    ++ctx.depth;
    check(resolve(ref->get<std::string>(), path, ctx), instance, path, ctx);
    --ctx.depth;
    return;
  }
  if (auto type = schema.find("type"); type != schema.end() && !type_matches(*type, instance)) {
    std::string names;
    if (type->is_array()) {
      for (const auto& t : *type) names += (names.empty() ? "" : ", ") + python_repr(t);
    } else {
      names = python_repr(*type);
    }
    ctx.errors.push_back({path, python_repr(instance) + " is not of type " + names});
    return;  // other keywords would only repeat the same problem
  }
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
    if (std::find(e->begin(), e->end(), instance) == e->end()) {
      ctx.errors.push_back({path, python_repr(instance) + " is not one of " + python_repr(*e)});
    }
  }
  if (instance.is_string()) {
    const auto& text = instance.get_ref<const std::string&>();
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string() && !regex_search(p->get<std::string>(), text)) {
      ctx.errors.push_back({path, python_repr(instance) + " does not match " + python_repr(*p)});
    }
    if (auto m = schema.find("minLength"); m != schema.end() && m->is_number() && utf8_length(text) < m->get<double>()) {
      ctx.errors.push_back({path, python_repr(instance) + " is too short"});
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && m->is_number() && utf8_length(text) > m->get<double>()) {
      ctx.errors.push_back({path, python_repr(instance) + " is too long"});
    }
  }
  if (instance.is_number()) {
    const double x = as_double(instance);
    if (auto m = schema.find("minimum"); m != schema.end() && m->is_number()) {
      const bool exclusive = value_or(schema, "exclusiveMinimum", false);
      if (exclusive ? x <= as_double(*m) : x < as_double(*m)) {
        ctx.errors.push_back({path, python_repr(instance) + (exclusive ? " is less than or equal to" : " is less than") +
                                        " the minimum of " + python_repr(*m)});
      }
    }
    if (auto m = schema.find("maximum"); m != schema.end() && m->is_number()) {
      const bool exclusive = value_or(schema, "exclusiveMaximum", false);
      if (exclusive ? x >= as_double(*m) : x > as_double(*m)) {
        ctx.errors.push_back({path, python_repr(instance) + (exclusive ? " is greater than or equal to" : " is greater than") +
                                        " the maximum of " + python_repr(*m)});
      }
    }
    if (auto m = schema.find("multipleOf"); m != schema.end() && m->is_number() && as_double(*m) > 0) {
      const double q = x / as_double(*m);
      if (!std::isfinite(q) || std::fabs(q - std::round(q)) > 1e-9) {
        ctx.errors.push_back({path, python_repr(instance) + " is not a multiple of " + python_repr(*m)});
      }
    }
  }
  if (instance.is_object()) check_object(schema, instance, path, ctx);
  if (instance.is_array()) check_array(schema, instance, path, ctx);
  check_combinators(schema, instance, path, ctx);
}

void JsonSchema::check_object(const Json& schema, const Json& instance, const std::string& path,
                              Context& ctx) const {
  if (auto req = schema.find("required"); req != schema.end() && req->is_array()) {
    for (const auto& name : *req) {
      if (name.is_string() && !instance.contains(name.get<std::string>())) {
        ctx.errors.push_back({path, python_repr(name) + " is a required property"});
      }
    }
  }
  if (auto m = schema.find("minProperties"); m != schema.end() && m->is_number() && instance.size() < m->get<double>()) {
    ctx.errors.push_back({path, python_repr(instance) + " does not have enough properties"});
  }
  if (auto m = schema.find("maxProperties"); m != schema.end() && m->is_number() && instance.size() > m->get<double>()) {
    ctx.errors.push_back({path, python_repr(instance) + " has too many properties"});
  }
  const Json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
  const Json* patterns = schema.contains("patternProperties") ? &schema["patternProperties"] : nullptr;
  const Json* additional = schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
  std::vector<std::string> unexpected;
  for (const auto& [key, value] : instance.items()) {
    bool matched = false;
    if (props != nullptr && props->is_object() && props->contains(key)) {
      matched = true;
      check((*props)[key], value, join_path(path, key), ctx);
    }
    if (patterns != nullptr && patterns->is_object()) {
      for (const auto& [pattern, sub] : patterns->items()) {
        if (regex_search(pattern, key)) {
          matched = true;
          check(sub, value, join_path(path, key), ctx);
        }
      }
    }
    if (matched || additional == nullptr) continue;
    if (additional->is_boolean() && !additional->get<bool>()) unexpected.push_back(key);
    else if (additional->is_object()) check(*additional, value, join_path(path, key), ctx);
  }
  if (!unexpected.empty()) {
    std::string names;
    for (const auto& k : unexpected) names += (names.empty() ? "" : ", ") + python_string(k);
    ctx.errors.push_back({path, "Additional properties are not allowed (" + names +
                                    (unexpected.size() == 1 ? " was" : " were") + " unexpected)"});
  }
  if (auto deps = schema.find("dependencies"); deps != schema.end() && deps->is_object()) {
    for (const auto& [key, dep] : deps->items()) {
      if (!instance.contains(key)) continue;
      if (dep.is_array()) {
        for (const auto& needed : dep) {
          if (needed.is_string() && !instance.contains(needed.get<std::string>())) {
            ctx.errors.push_back({path, python_repr(needed) + " is a dependency of " + python_string(key)});
          }
        }
      } else {
        check(dep, instance, path, ctx);
      }
    }
  }
}

void JsonSchema::check_array(const Json& schema, const Json& instance, const std::string& path,
                             Context& ctx) const {
  if (auto m = schema.find("minItems"); m != schema.end() && m->is_number() && instance.size() < m->get<double>()) {
    ctx.errors.push_back({path, python_repr(instance) + " is too short"});
  }
  if (auto m = schema.find("maxItems"); m != schema.end() && m->is_number() && instance.size() > m->get<double>()) {
    ctx.errors.push_back({path, python_repr(instance) + " is too long"});
  }
  if (value_or(schema, "uniqueItems", false)) {
    for (std::size_t i = 0; i < instance.size(); ++i) {
      for (std::size_t j = i + 1; j < instance.size(); ++j) {
        if (instance[i] == instance[j]) {
          ctx.errors.push_back({path, python_repr(instance) + " has non-unique elements"});
          i = j = instance.size();
        }
      }
    }
  }
  auto items = schema.find("items");
  if (items == schema.end()) return;
  if (items->is_object()) {
    for (std::size_t i = 0; i < instance.size(); ++i) check(*items, instance[i], index_path(path, i), ctx);
    return;
  }
  if (!items->is_array()) return;
  for (std::size_t i = 0; i < instance.size() && i < items->size(); ++i) {
    check((*items)[i], instance[i], index_path(path, i), ctx);
  }
  auto extra = schema.find("additionalItems");
  if (extra == schema.end() || instance.size() <= items->size()) return;
  if (extra->is_boolean() && !extra->get<bool>()) {
    std::string names;
    for (std::size_t i = items->size(); i < instance.size(); ++i) names += (names.empty() ? "" : ", ") + python_repr(instance[i]);
    ctx.errors.push_back({path, "Additional items are not allowed (" + names +
                                    (instance.size() - items->size() == 1 ? " was" : " were") + " unexpected)"});
  } else if (extra->is_object()) {
    for (std::size_t i = items->size(); i < instance.size(); ++i) check(*extra, instance[i], index_path(path, i), ctx);
  }
}

void JsonSchema::check_combinators(const Json& schema, const Json& instance, const std::string& path,
                                   Context& ctx) const {
  if (auto all = schema.find("allOf"); all != schema.end() && all->is_array()) {
    for (const auto& sub : *all) check(sub, instance, path, ctx);
  }
  // Runs each branch on its own error list; returns the per-branch lists.
  auto run_branches = [&](const Json& branches) {
    std::vector<std::vector<SchemaViolation>> results;
    for (const auto& sub : branches) {
      Context branch;
      branch.depth = ctx.depth;
      check(sub, instance, path, branch);
      results.push_back(std::move(branch.errors));
    }
    return results;
  };
  // When no branch matched, the errors of the one branch whose type fits the value (ignoring
  // the ARM-expression alternative) say more than "not valid under any of the given schemas".
  auto report_no_match = [&](const Json& branches, const std::vector<std::vector<SchemaViolation>>& results) {
    int fitting = -1;
    int count = 0;
    for (std::size_t i = 0; i < branches.size(); ++i) {
      const Json& b = branches[i];
      if (b.is_object() && b.value("$ref", "") == kArmExpressionRef) continue;
      const Json* target = &b;
      Context scratch;
      for (int hops = 0; target->is_object() && target->contains("$ref") && hops < 8; ++hops) {
        target = &resolve((*target)["$ref"].get<std::string>(), path, scratch);
      }
      if (!target->is_object() || !target->contains("type") || type_matches((*target)["type"], instance)) {
        fitting = static_cast<int>(i);
        ++count;
      }
    }
    if (count == 1 && !results[static_cast<std::size_t>(fitting)].empty()) {
      for (const auto& e : results[static_cast<std::size_t>(fitting)]) ctx.errors.push_back(e);
    } else {
      ctx.errors.push_back({path, python_repr(instance) + " is not valid under any of the given schemas"});
    }
  };
  if (auto any = schema.find("anyOf"); any != schema.end() && any->is_array()) {
    auto results = run_branches(*any);
    if (std::none_of(results.begin(), results.end(), [](const auto& r) { return r.empty(); })) {
      report_no_match(*any, results);
    }
  }
  if (auto one = schema.find("oneOf"); one != schema.end() && one->is_array()) {
    auto results = run_branches(*one);
    auto valid = std::count_if(results.begin(), results.end(), [](const auto& r) { return r.empty(); });
    if (valid == 0) {
      report_no_match(*one, results);
    } else if (valid > 1) {
      ctx.errors.push_back({path, python_repr(instance) + " is valid under each of " + python_repr(*one)});
    }
  }
  if (auto n = schema.find("not"); n != schema.end()) {
    Context branch;
    branch.depth = ctx.depth;
    check(*n, instance, path, branch);
    if (branch.errors.empty()) {
      ctx.errors.push_back({path, python_repr(instance) + " should not be valid under " + python_repr(*n)});
    }
  }
}

}  // namespace batchai
