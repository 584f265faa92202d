// Leaf commands: option declaration, argparse-style validation, confirmation, help text.
#include "command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "argparse_format.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/ids.hpp"
#include "output/formats.hpp"

namespace batchai::cli {
namespace {

constexpr const char* kGlobalGroup = "Global Arguments";

std::string display_names(const std::string& names) {
  std::string out = names;
  for (auto& c : out) {
    if (c == ',') c = '/';
  }
  return out;
}

std::string long_key(const std::string& names) {
  auto start = names.find("--");
  auto end = names.find(',', start);
  return names.substr(start + 2, end == std::string::npos ? std::string::npos : end - start - 2);
}

std::optional<int> parse_int(const std::string& text) {
  try {
    std::size_t used = 0;
    long value = std::stol(text, &used, 10);
    if (used != text.size() || value < INT32_MIN || value > INT32_MAX) return std::nullopt;
    return static_cast<int>(value);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string env_value(const std::string& name) {
  if (name.empty()) return {};
  const char* v = std::getenv(name.c_str());
  return v ? v : "";
}

}  // namespace

Command::Command(CLI::App& parent, CliContext& ctx, const std::string& name, const std::string& summary)
    : ctx_(ctx), app_(parent.add_subcommand(name, summary)) {
  app_->callback([this] { ctx_.selected = this; });
  auto& g = ctx_.globals;
  globals_ = {
      app_->add_option("--output,-o", g.output, "Output format: json, jsonc, none, table, tsv, yaml, yamlc."),
      app_->add_option("--query", g.query, "JMESPath query string (http://jmespath.org/)."),
      app_->add_flag("--verbose", g.verbose, "Increase logging verbosity."),
      app_->add_flag("--debug", g.debug, "Increase logging verbosity to show all debug logs."),
      app_->add_flag("--only-show-errors", g.only_show_errors, "Only show errors, suppressing warnings."),
      app_->add_option("--subscription", g.subscription, "Name or ID of subscription."),
  };
  for (CLI::Option* opt : globals_) opt->group(kGlobalGroup);
  ctx_.commands[app_] = this;
}

Command& Command::option(const std::string& names, const std::string& help, OptionSpec spec) {
  std::string text = help;
  if (!spec.default_value.empty()) text += " Default: " + spec.default_value + ".";
  if (!spec.env.empty()) text += " Configured default: $" + spec.env + ".";
  if (!spec.choices.empty()) {
    text += " Allowed values:";
    for (const auto& c : spec.choices) text += " " + c;
    text += ".";
  }
  // Not add_option(names, text): with an lvalue string CLI11 would bind `text` as the target.
  CLI::Option* opt = app_->add_option(names)->description(text);
  if (spec.many) {
    opt->expected(1, CLI::detail::expected_max_vector_size);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  } else if (spec.repeatable) {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  } else {
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  if (!spec.group.empty()) opt->group(spec.group);
  // The prepass (argv_prepass.cpp) has already checked and normalised integers and choices as
  // argparse does; these validators only repeat it for CLI11 (and name the type in help).
  if (spec.integer) {
    opt->check(CLI::Validator(
        [](std::string& value) -> std::string {
          return argparse::py_int(value) ? std::string() : "invalid int value: " + argparse::py_repr(value);
        },
        "INT"));
  }
  if (!spec.choices.empty()) {
    auto choices = spec.choices;
    opt->check(CLI::Validator(
        [choices](std::string& value) -> std::string {
          for (const auto& c : choices) {
            if (iequals(c, value)) {
              value = c;
              return {};
            }
          }
          std::string allowed;
          for (const auto& c : choices) allowed += (allowed.empty() ? "'" : ", '") + c + "'";
          return "invalid choice: '" + value + "' (choose from " + allowed + ")";
        },
        ""));
  }
  entries_.push_back({long_key(names), display_names(names), std::move(spec), opt, false});
  return *this;
}

Command& Command::flag(const std::string& names, const std::string& help, const std::string& group) {
  CLI::Option* opt = app_->add_flag(names, help);
  if (!group.empty()) opt->group(group);
  entries_.push_back({long_key(names), display_names(names), {}, opt, true});
  return *this;
}

Command& Command::example(const std::string& description, const std::string& command_line) {
  examples_.emplace_back(description, command_line);
  std::string footer = "\nExamples\n";
  for (const auto& [what, line] : examples_) footer += "    " + what + "\n        " + line + "\n\n";
  app_->footer(footer);
  return *this;
}

Command& Command::ids() {
  CLI::Option* opt = app_->add_option("--ids")->description(
      "One or more resource IDs (space-delimited). If provided, no other 'Resource Id' arguments should be "
      "specified.");
  opt->expected(1, CLI::detail::expected_max_vector_size)->group("Resource Id Arguments");
  entries_.push_back({"ids", "--ids", {}, opt, false});
  return *this;
}

Command& Command::confirmation() {
  return flag("--yes,-y", "Do not prompt for confirmation.");
}

Command& Command::show() {
  is_show_ = true;
  return *this;
}

Command& Command::table(output::TableTransformer transformer, std::vector<std::string> fields) {
  transformer_ = std::move(transformer);
  table_fields_ = std::move(fields);
  return *this;
}

Command& Command::hidden() {
  app_->group("");  // CLI11 lists no subcommand of an empty group
  return *this;
}

Command& Command::arguments(ArgumentStyle style) {
  if (style != ArgumentStyle::kArgparse) {
    for (CLI::Option* opt : globals_) app_->remove_option(opt);
    globals_.clear();
  }
  style_ = style;
  return *this;
}

Command& Command::exit_zero_on_interrupt() {
  zero_on_interrupt_ = true;
  return *this;
}

Command& Command::handler(Handler handler) {
  handler_ = std::move(handler);
  return *this;
}

const Command::Entry* Command::find(const std::string& key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

std::vector<Command::TableRow> Command::argparse_table() const {
  // az adds these to every command (knack's global parser, then --subscription), in this order.
  static const std::vector<std::string> kGlobals = {"verbose", "debug", "only-show-errors",
                                                    "output",  "query", "subscription"};
  std::vector<std::pair<std::size_t, TableRow>> ranked;
  for (const CLI::Option* opt : app_->get_options()) {
    argparse::ArgAction a;
    std::size_t rank = kGlobals.size() + 1;
    const Entry* entry = nullptr;
    for (const auto& e : entries_) {
      if (e.option == opt) entry = &e;
    }
    if (opt == app_->get_help_ptr()) {
      a.option_strings = {"-h", "--help"};
      a.kind = argparse::ArgKind::kHelp;
      rank = 0;
    } else if (entry != nullptr) {
      for (std::size_t start = 0; start <= entry->display.size();) {
        std::size_t slash = std::min(entry->display.find('/', start), entry->display.size());
        a.option_strings.push_back(entry->display.substr(start, slash - start));
        start = slash + 1;
      }
      const OptionSpec& spec = entry->spec;
      using K = argparse::ArgKind;
      a.kind = entry->is_flag ? K::kFlag : entry->key == "ids" ? K::kExtend : spec.many ? K::kStoreMany
               : spec.repeatable ? K::kAppend : K::kStore;
      // A configured default or a default value makes an option optional, as in az.
      bool needed = spec.required && env_value(spec.env).empty() && spec.default_value.empty();
      a.required = needed && !spec.replaced_by_ids;
      if (needed && spec.replaced_by_ids) a.required_unless = 0;  // set to --ids' index below
      a.choices = spec.choices;
      a.integer = spec.integer;
      if (entry->key == "ids") a.metavar = "ID";
    } else {  // the global options, and any option added to the app directly
      for (const auto& l : opt->get_lnames()) a.option_strings.push_back("--" + l);
      for (const auto& n : opt->get_snames()) a.option_strings.push_back("-" + n);
      using K = argparse::ArgKind;
      a.kind = opt->get_items_expected_max() == 0 ? K::kFlag : opt->get_expected_max() > 1 ? K::kExtend
               : opt->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll ? K::kAppend : K::kStore;
      std::string name = opt->get_lnames().empty() ? std::string() : opt->get_lnames().front();
      if (auto it = std::find(kGlobals.begin(), kGlobals.end(), name); it != kGlobals.end()) {
        rank = 1 + static_cast<std::size_t>(it - kGlobals.begin());
      }
      if (name == "output") a.choices = output::format_names();
      if (name == "query") a.metavar = "JMESPATH";
      if (name == "subscription") a.metavar = "_SUBSCRIPTION";
    }
    if (a.option_strings.empty()) continue;  // a positional: none in this tree
    ranked.emplace_back(rank, TableRow{std::move(a), opt});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  std::vector<TableRow> table;
  std::optional<std::size_t> ids;
  for (auto& [rank, row] : ranked) {
    if (row.action.long_name() == "--ids") ids = table.size();
    table.push_back(std::move(row));
  }
  for (auto& row : table) {
    if (!row.action.required_unless) continue;
    row.action.required_unless = ids;
    row.action.required = !ids.has_value();
  }
  return table;
}

Json Command::parsed_values() const {
  Json out = Json::object();
  for (const auto& row : argparse_table()) {
    const CLI::Option* opt = row.option;
    if (row.action.kind == argparse::ArgKind::kHelp || opt->count() == 0) continue;
    std::string key = row.action.long_name().substr(2);
    switch (row.action.kind) {
      case argparse::ArgKind::kFlag: out[key] = true; break;
      case argparse::ArgKind::kStore: out[key] = opt->results().back(); break;
      default: out[key] = opt->results(); break;
    }
  }
  return out;
}

std::string Command::usage() const {
  std::vector<argparse::ArgAction> actions;
  for (const auto& row : argparse_table()) actions.push_back(row.action);
  return argparse::format_usage(command_path(app_), actions, "", argparse::usage_width());
}

std::string Command::display_of(const std::string& name) const {
  for (const auto& e : entries_) {
    std::string padded = "/" + e.display + "/";
    if (padded.find("/" + name + "/") != std::string::npos) return e.display;
  }
  return name;
}

void Command::confirm() const {
  if (Args(*this).flag("yes")) return;
  if (!isatty(STDIN_FILENO)) throw Error("Unable to prompt for confirmation as no tty available. Use --yes.");
  for (;;) {
    std::cout << "Are you sure you want to perform this operation? (y/n): " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) throw Cancelled("Operation cancelled.");
    std::string lower = to_lower(answer);
    if (lower == "y" || lower == "yes") return;
    if (lower == "n" || lower == "no") throw Cancelled("Operation cancelled.");
  }
}

CommandResult Command::execute() {
  Args args(*this);
  bool have_ids = find("ids") != nullptr && find("ids")->option->count() > 0;
  std::string missing;
  for (const auto& e : entries_) {
    if (!e.spec.required || (have_ids && e.spec.replaced_by_ids)) continue;
    if (!args.get(e.key)) missing += (missing.empty() ? "" : ", ") + e.display;
  }
  if (!missing.empty()) throw UsageError("the following arguments are required: " + missing);
  if (find("yes") != nullptr) confirm();
  if (!handler_) throw Error("The command '" + command_path(app_) + "' is not available in this build.");
  return handler_(args);
}

std::optional<std::string> Args::get(const std::string& key) const {
  const auto* e = command_.find(key);
  if (e == nullptr) return std::nullopt;
  if (e->option->count() > 0) {
    if (e->is_flag) return std::string("true");
    return e->option->results().back();
  }
  if (std::string env = env_value(e->spec.env); !env.empty()) return env;
  if (!e->spec.default_value.empty()) return e->spec.default_value;
  return std::nullopt;
}

std::string Args::str(const std::string& key) const {
  auto v = get(key);
  if (!v) throw UsageError("the following arguments are required: --" + key);
  return *v;
}

std::optional<int> Args::integer(const std::string& key) const {
  auto v = get(key);
  if (!v) return std::nullopt;
  auto parsed = parse_int(*v);
  if (!parsed) throw UsageError("argument --" + key + ": invalid int value: '" + *v + "'");
  return parsed;
}

bool Args::flag(const std::string& key) const {
  const auto* e = command_.find(key);
  return e != nullptr && e->option->count() > 0;
}

std::vector<std::string> Args::table_fields() const {
  const GlobalOptions& g = command_.ctx_.globals;
  if (g.output != "table" || !g.query.empty()) return {};
  return command_.table_fields_;
}

const std::vector<std::string>& Args::verbatim() const { return command_.verbatim_; }

std::vector<std::string> Args::all(const std::string& key) const {
  const auto* e = command_.find(key);
  if (e == nullptr) return {};
  return e->option->results();
}

CLI::App& add_group(CLI::App& parent, CliContext& ctx, const std::string& name, const std::string& summary) {
  CLI::App* group = parent.add_subcommand(name, summary);
  group->require_subcommand(0, 1);
  group->callback([group, &ctx] {
    if (group->get_subcommands().empty()) ctx.help_app = group;
  });
  return *group;
}

Command& add_command(CLI::App& parent, CliContext& ctx, const std::string& name, const std::string& summary) {
  return ctx.own(std::make_unique<Command>(parent, ctx, name, summary));
}

}  // namespace batchai::cli
