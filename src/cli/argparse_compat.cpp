// argparse's parse_known_args for a parser without positionals, step for step as in CPython
// 3.11 Lib/argparse.py (_parse_optional, _get_option_tuples, consume_optional, _get_values), so
// that what az accepts, refuses and keeps is what batchai accepts, refuses and keeps.
#include "argparse_compat.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "argparse_format.hpp"

namespace batchai::cli::argparse {
namespace {

// An argument string read as an option: the action (none when unknown), the option string
// it matched and the argument attached to it ("-dX", "--name=X").
struct OptionTuple {
  std::optional<std::size_t> action;
  std::string option_string;
  std::optional<std::string> explicit_arg;
};

// The help action was reached: argparse prints help and exits there.
struct HelpReached {
  std::size_t action;
};

std::string error_for(const ArgAction& action, const std::string& message) {
  return "argument " + action.name() + ": " + message;
}

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// _negative_number_matcher: '^-\d+$|^-\d*\.\d+$' ('$' also matches before a final newline).
bool negative_number(std::string s) {
  if (s.size() > 1 && s.back() == '\n') s.pop_back();
  if (s.size() < 2 || s[0] != '-') return false;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t dot = s.find('.');
  if (dot == std::string::npos) return std::all_of(s.begin() + 1, s.end(), digit);
  return dot + 1 < s.size() && std::all_of(s.begin() + 1, s.begin() + static_cast<long>(dot), digit) &&
         std::all_of(s.begin() + static_cast<long>(dot) + 1, s.end(), digit);
}

class Parser {
 public:
  explicit Parser(const std::vector<ArgAction>& actions) : actions_(actions) {
    for (std::size_t i = 0; i < actions.size(); ++i) {
      for (const auto& s : actions[i].option_strings) strings_.emplace_back(s, i);
    }
  }

  std::optional<std::size_t> find(const std::string& option_string) const {
    for (const auto& [s, i] : strings_) {
      if (s == option_string) return i;
    }
    return std::nullopt;
  }

  // _parse_optional: nullopt for an argument ('A'); throws on an ambiguous prefix.
  std::optional<OptionTuple> parse_optional(const std::string& arg) const {
    if (arg.empty() || arg[0] != '-') return std::nullopt;
    if (auto i = find(arg)) return OptionTuple{i, arg, std::nullopt};
    if (arg.size() == 1) return std::nullopt;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      if (auto i = find(arg.substr(0, eq))) return OptionTuple{i, arg.substr(0, eq), arg.substr(eq + 1)};
    }
    std::vector<OptionTuple> tuples = option_tuples(arg);
    if (tuples.size() > 1) {
      std::string matches;
      for (const auto& t : tuples) matches += (matches.empty() ? "" : ", ") + t.option_string;
      throw ArgparseError("ambiguous option: " + arg + " could match " + matches);
    }
    if (tuples.size() == 1) return tuples.front();
    if (negative_number(arg)) return std::nullopt;  // no option string looks like a negative number
    if (arg.find(' ') != std::string::npos) return std::nullopt;
    return OptionTuple{std::nullopt, arg, std::nullopt};
  }

  // _get_option_tuples (allow_abbrev=True): unique prefixes of long options; a short option
  // with its argument attached.
  std::vector<OptionTuple> option_tuples(const std::string& arg) const {
    std::vector<OptionTuple> out;
    if (arg[1] == '-') {
      auto eq = arg.find('=');
      std::string prefix = arg.substr(0, eq);
      std::optional<std::string> explicit_arg;
      if (eq != std::string::npos) explicit_arg = arg.substr(eq + 1);
      for (const auto& [s, i] : strings_) {
        if (s.starts_with(prefix)) out.push_back({i, s, explicit_arg});
      }
    } else {
      std::string short_prefix = arg.substr(0, 2);
      for (const auto& [s, i] : strings_) {
        if (s == short_prefix) {
          out.push_back({i, s, arg.substr(2)});
        } else if (s.starts_with(arg)) {
          out.push_back({i, s, std::nullopt});
        }
      }
    }
    return out;
  }

  ParsedArgs parse(const std::vector<std::string>& args) {
    args_ = &args;
    result_ = {};
    result_.values.assign(actions_.size(), {});
    result_.seen.assign(actions_.size(), false);
    // Classify every argument first, as argparse does: an ambiguous prefix anywhere is refused
    // before any value is looked at.
    std::map<std::size_t, OptionTuple> options;
    pattern_.clear();
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--") {
        pattern_ += '-';
        pattern_.append(args.size() - i - 1, 'A');
        break;
      }
      std::optional<OptionTuple> t = parse_optional(args[i]);
      pattern_ += t ? 'O' : 'A';
      if (t) options.emplace(i, std::move(*t));
    }
    try {
      std::size_t start = 0;
      for (const auto& [index, tuple] : options) {
        if (index < start) continue;  // consumed as the value of an earlier option
        for (std::size_t k = start; k < index; ++k) result_.extras.push_back(args[k]);
        start = consume_optional(index, tuple);
      }
      for (std::size_t k = start; k < args.size(); ++k) result_.extras.push_back(args[k]);
    } catch (const HelpReached& h) {
      result_.help = h.action;
    }
    return std::move(result_);
  }

 private:
  // _match_argument against the patterns after an option: how many arguments it takes.
  std::size_t match_argument(const ArgAction& action, const std::string& patterns) const {
    if (!action.takes_value()) return 0;
    const bool many = action.kind == ArgKind::kStoreMany || action.kind == ArgKind::kExtend;
    std::size_t count = 0;
    while (count < patterns.size() && patterns[count] == 'A') ++count;
    if (count == 0) {
      throw ArgparseError(error_for(action, many ? "expected at least one argument" : "expected one argument"));
    }
    return many ? count : 1;
  }

  std::size_t consume_optional(std::size_t start, OptionTuple tuple) {
    std::vector<std::pair<std::size_t, std::vector<std::string>>> taken;
    std::size_t stop = start + 1;
    for (;;) {
      if (!tuple.action) {
        result_.extras.push_back((*args_)[start]);
        return start + 1;
      }
      const ArgAction& action = actions_[*tuple.action];
      if (tuple.explicit_arg) {
        const std::string& explicit_arg = *tuple.explicit_arg;
        if (!action.takes_value() && tuple.option_string[1] != '-' && !explicit_arg.empty()) {
          // "-yk": -y takes no value, so the rest is read as more single-dash options.
          taken.push_back({*tuple.action, {}});
          std::string next = std::string("-") + explicit_arg[0];
          std::optional<std::size_t> next_action = find(next);
          if (!next_action) throw ArgparseError(error_for(action, "ignored explicit argument " + py_repr(explicit_arg)));
          tuple = {next_action, next, explicit_arg.size() > 1 ? std::optional(explicit_arg.substr(1)) : std::nullopt};
          continue;
        }
        if (!action.takes_value()) {
          throw ArgparseError(error_for(action, "ignored explicit argument " + py_repr(explicit_arg)));
        }
        taken.push_back({*tuple.action, {explicit_arg}});
        break;
      }
      std::size_t count = match_argument(action, pattern_.substr(std::min(start + 1, pattern_.size())));
      stop = start + 1 + count;
      taken.push_back({*tuple.action, {args_->begin() + static_cast<long>(start) + 1,
                                       args_->begin() + static_cast<long>(stop)}});
      break;
    }
    for (auto& [index, values] : taken) take_action(index, std::move(values));
    return stop;
  }

  // _get_values (type, then choices) and the action itself.
  void take_action(std::size_t index, std::vector<std::string> values) {
    const ArgAction& action = actions_[index];
    result_.seen[index] = true;
    // Every value is converted before any is checked against the choices, as argparse does.
    for (auto& v : values) {
      if (!action.integer) continue;
      std::optional<std::string> decimal = py_int(v);
      if (!decimal) throw ArgparseError(error_for(action, "invalid int value: " + py_repr(v)));
      v = *decimal;
    }
    for (auto& v : values) {
      if (!action.choices.empty()) {
        auto it = std::find_if(action.choices.begin(), action.choices.end(),
                               [&v](const std::string& c) { return iequals(c, v); });
        if (it == action.choices.end()) {
          std::string allowed;
          for (const auto& c : action.choices) allowed += (allowed.empty() ? "" : ", ") + py_repr(c);
          throw ArgparseError(error_for(action, "invalid choice: " + py_repr(v) + " (choose from " + allowed + ")"));
        }
        v = *it;
      }
    }
    auto& held = result_.values[index];
    switch (action.kind) {
      case ArgKind::kHelp: throw HelpReached{index};
      case ArgKind::kFlag: break;
      case ArgKind::kStore:
      case ArgKind::kStoreMany: held = std::move(values); break;
      case ArgKind::kAppend:
      case ArgKind::kExtend: held.insert(held.end(), values.begin(), values.end()); break;
    }
  }

  const std::vector<ArgAction>& actions_;
  std::vector<std::pair<std::string, std::size_t>> strings_;  // option string → action, in order
  const std::vector<std::string>* args_ = nullptr;
  std::string pattern_;  // 'O' option, 'A' argument, '-' for "--"
  ParsedArgs result_;
};

}  // namespace

std::string ArgAction::name() const {
  std::string out;
  for (const auto& s : option_strings) out += (out.empty() ? "" : "/") + s;
  return out;
}

std::string ArgAction::long_name() const {
  for (const auto& s : option_strings) {
    if (s.starts_with("--")) return s;
  }
  return option_strings.empty() ? std::string() : option_strings.front();
}

ParsedArgs parse_known_args(const std::vector<ArgAction>& actions, const std::vector<std::string>& args) {
  return Parser(actions).parse(args);
}

ParsedArgs parse_args(const std::vector<ArgAction>& actions, const std::vector<std::string>& args,
                      const std::vector<std::string>& outer_extras) {
  ParsedArgs parsed = parse_known_args(actions, args);
  if (parsed.help) return parsed;
  std::string missing;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const ArgAction& a = actions[i];
    bool excused = a.required_unless && parsed.seen[*a.required_unless];
    if ((a.required || (a.required_unless && !excused)) && !parsed.seen[i]) {
      missing += (missing.empty() ? "" : ", ") + a.name();
    }
  }
  if (!missing.empty()) throw ArgparseError("the following arguments are required: " + missing);
  std::vector<std::string> extras = outer_extras;
  extras.insert(extras.end(), parsed.extras.begin(), parsed.extras.end());
  if (!extras.empty()) {
    std::string joined;
    for (const auto& e : extras) joined += (joined.empty() ? "" : " ") + e;
    throw ArgparseError("unrecognized arguments: " + joined);
  }
  return parsed;
}

bool looks_like_option(const std::vector<ArgAction>& actions, const std::string& arg) {
  try {
    return Parser(actions).parse_optional(arg).has_value();
  } catch (const ArgparseError&) {
    return true;  // an ambiguous prefix is still an option
  }
}

}  // namespace batchai::cli::argparse
