// Signature checks of the built-in functions: arity (at compile time) and argument types (at
// run time), with messages that say what was expected and what was given.
#include "function_checks.hpp"

#include <algorithm>
#include <string>

#include "json_util.hpp"

namespace batchai::query::detail {
namespace {

bool matches(unsigned allowed, const Arg& arg) {
  if (arg.expref != nullptr) return (allowed & kTypeExpref) != 0;
  const Value& value = arg.value;
  if (value.is_array()) {
    if ((allowed & kTypeArray) != 0) return true;
    bool numbers = true;
    bool strings = true;
    for (std::size_t i = 0, n = value.size(); i < n; ++i) {
      numbers = numbers && value.at(i).is_number();
      strings = strings && value.at(i).is_string();
    }
    return ((allowed & kTypeArrayNumber) != 0 && numbers) || ((allowed & kTypeArrayString) != 0 && strings);
  }
  const Json& v = value.get();
  switch (v.type()) {
    case Json::value_t::null: return (allowed & kTypeNull) != 0;
    case Json::value_t::boolean: return (allowed & kTypeBoolean) != 0;
    case Json::value_t::string: return (allowed & kTypeString) != 0;
    case Json::value_t::object: return (allowed & kTypeObject) != 0;
    default: return (allowed & kTypeNumber) != 0;
  }
}

std::string describe_types(unsigned allowed) {
  if ((allowed & kTypeAny) == kTypeAny) return "any value";
  static const std::pair<unsigned, const char*> kNames[] = {
      {kTypeNumber, "a number"},           {kTypeString, "a string"},
      {kTypeBoolean, "a boolean"},         {kTypeArray, "an array"},
      {kTypeObject, "an object"},          {kTypeNull, "null"},
      {kTypeExpref, "an &expression"},     {kTypeArrayNumber, "an array of numbers"},
      {kTypeArrayString, "an array of strings"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((allowed & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

}  // namespace

std::string check_arity(const FunctionSpec& spec, std::size_t count) {
  const std::size_t n = spec.params.size();
  if (spec.variadic ? count >= n : count == n) return {};
  const std::string plural = n == 1 ? " argument" : " arguments";
  return "function " + std::string(spec.name) + "() takes " + (spec.variadic ? "at least " : "") +
         std::to_string(n) + plural + " but " + std::to_string(count) + (count == 1 ? " was" : " were") + " given";
}

void check_types(const FunctionSpec& spec, const Node& call, const std::vector<Arg>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const unsigned allowed = spec.params[std::min(i, spec.params.size() - 1)];
    if (matches(allowed, args[i])) continue;
    std::string got = args[i].expref != nullptr ? "an &expression" : type_name(args[i].value);
    if (args[i].expref == nullptr && args[i].value.is_array() && (allowed & kTypeArray) == 0) {
      // Say which element breaks an array-of-numbers/strings signature.
      const Value& array = args[i].value;
      const bool numbers_ok = (allowed & kTypeArrayNumber) != 0;
      const bool strings_ok = (allowed & kTypeArrayString) != 0;
      const bool want_numbers = numbers_ok && (!strings_ok || (array.size() > 0 && array.at(0).is_number()));
      for (std::size_t k = 0; k < array.size(); ++k) {
        const Json& e = array.at(k);
        if (want_numbers ? !e.is_number() : !e.is_string()) {
          got = std::string("an array whose element ") + std::to_string(k) + " is " + type_name(e);
          break;
        }
      }
    }
    throw QueryError(ErrorKind::kInvalidType, call.position,
                     "Invalid JMESPath argument type at position " + std::to_string(call.position) + ": function " +
                         call.name + "() expects argument " + std::to_string(i + 1) + " to be " +
                         describe_types(allowed) + ", but got " + got);
  }
}

}  // namespace batchai::query::detail
