// The prepass: az's parser tree (root → groups → command, each an argparse parser; a group's
// subcommand is a positional that takes the rest of argv) walked over the CLI11 tree.
//
// Why a prepass instead of CLI11 options: CLI11 reads `-d=X` as "=X", a repeated single option as
// an error, a value beginning with '-' as an option, and knows neither prefixes nor argparse's
// refusals. Emulating argparse once, over the table every command already declares, fixes all
// of these at one place; CLI11 then only receives argv it reads unambiguously.
#include "argv_prepass.hpp"

#include "argparse_format.hpp"
#include "command.hpp"

namespace batchai::cli {
namespace {

std::vector<argparse::ArgAction> help_only() {
  argparse::ArgAction help;
  help.option_strings = {"-h", "--help"};
  help.kind = argparse::ArgKind::kHelp;
  return {help};
}

// Commands users can type, as `{a,b,...}` lists them (hidden internal ones start with '_').
std::vector<std::string> visible_subcommands(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().starts_with("_")) names.push_back(sub->get_name());
  }
  return names;
}

const CLI::App* subcommand_named(const CLI::App* app, const std::string& name) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

// What CLI11 receives for the values argparse kept: `--name=value` (CLI11 would take a
// separate value beginning with '-' for an option) and `--name ""` for an empty value (CLI11
// reads `--name=` as a missing one).
void append_canonical(std::vector<std::string>& argv, const std::vector<Command::TableRow>& table,
                      const argparse::ParsedArgs& parsed) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    const argparse::ArgAction& a = table[i].action;
    if (!parsed.seen[i] || a.kind == argparse::ArgKind::kHelp) continue;
    if (!a.takes_value()) {
      argv.push_back(a.long_name());
      continue;
    }
    for (const auto& value : parsed.values[i]) {
      if (value.empty()) {
        argv.push_back(a.long_name());
        argv.emplace_back();
      } else {
        argv.push_back(a.long_name() + "=" + value);
      }
    }
  }
}

Prepass refusal(Prepass::Outcome outcome, const CLI::App* app, std::string message) {
  Prepass p;
  p.outcome = outcome;
  p.app = app;
  p.message = std::move(message);
  return p;
}

// az's AzCliCommandParser._check_value for a name that is no subcommand (azure-cli of the
// Batch AI era; prog "az batchai ..." is "batchai ...").
Prepass command_not_found(const CLI::App* app, const std::string& value) {
  std::string prog = command_path(app);
  Prepass p = refusal(Prepass::Outcome::kCommandNotFound, app,
                      prog + ": '" + value + "' is not in the '" + prog + "' command group. See '" + prog +
                          " --help'.");
  std::vector<std::string> similar = argparse::close_matches(value, visible_subcommands(app));
  if (!similar.empty()) {
    bool several = similar.size() > 1;
    p.hint = "\nThe most similar choice" + std::string(several ? "s" : "") + " to '" + value + "' " +
             (several ? "are" : "is") + ":\n";
    for (std::size_t i = 0; i < similar.size(); ++i) p.hint += (i == 0 ? "\t" : "\n\t") + similar[i];
    p.hint += "\n";
  }
  return p;
}

}  // namespace

Prepass prepass(const CLI::App& root, const CliContext& ctx, int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Prepass result;
  result.argv = {argc > 0 ? argv[0] : "batchai"};
  std::vector<std::string> extras;  // what the groups on the way did not recognise
  const CLI::App* app = &root;
  std::size_t i = 0;
  for (;;) {
    auto it = ctx.commands.find(app);
    if (it != ctx.commands.end() && it->second->argument_style() == ArgumentStyle::kNative) {
      result.argv.assign(argv, argv + argc);  // `train`: CLI11 reads its typed options as given
      return result;
    }
    if (it != ctx.commands.end() && it->second->argument_style() == ArgumentStyle::kVerbatim) {
      // CLI11 only selects the command; its words go to the handler untouched.
      result.verbatim.assign(args.begin() + static_cast<long>(i), args.end());
      return result;
    }
    if (it != ctx.commands.end()) {
      std::vector<Command::TableRow> table = it->second->argparse_table();
      std::vector<argparse::ArgAction> actions;
      for (const auto& row : table) actions.push_back(row.action);
      try {
        argparse::ParsedArgs parsed =
            argparse::parse_args(actions, std::vector<std::string>(args.begin() + static_cast<long>(i), args.end()),
                                 extras);
        if (parsed.help) {
          result.argv.emplace_back("--help");
        } else {
          append_canonical(result.argv, table, parsed);
        }
        return result;
      } catch (const argparse::ArgparseError& e) {
        return refusal(Prepass::Outcome::kUsageError, app, e.what());
      }
    }
    // A group parser: -h/--help, then the subcommand positional, which takes everything after it.
    static const std::vector<argparse::ArgAction> kGroupActions = help_only();
    std::size_t name = i;
    while (name < args.size() && args[name] != "--" && argparse::looks_like_option(kGroupActions, args[name])) ++name;
    bool has_name = name < args.size() && !(args[name] == "--" && name + 1 == args.size());
    try {
      argparse::ParsedArgs parsed = argparse::parse_known_args(
          kGroupActions, std::vector<std::string>(args.begin() + static_cast<long>(i),
                                                  args.begin() + static_cast<long>(has_name ? name : args.size())));
      if (parsed.help) {
        result.argv.emplace_back("--help");
        return result;
      }
      extras.insert(extras.end(), parsed.extras.begin(), parsed.extras.end());
    } catch (const argparse::ArgparseError& e) {
      return refusal(Prepass::Outcome::kUsageError, app, e.what());
    }
    if (!has_name) {
      if (!extras.empty()) {
        std::string joined;
        for (const auto& e : extras) joined += (joined.empty() ? "" : " ") + e;
        return refusal(Prepass::Outcome::kUsageError, app, "unrecognized arguments: " + joined);
      }
      return result;  // a group named alone: CLI11's callback asks for its help
    }
    const CLI::App* sub = subcommand_named(app, args[name]);
    if (sub == nullptr) return command_not_found(app, args[name]);
    result.argv.push_back(args[name]);
    app = sub;
    i = name + 1;
  }
}

std::string group_usage(const CLI::App* app) {
  std::string names;
  for (const auto& n : visible_subcommands(app)) names += (names.empty() ? "{" : ",") + n;
  return argparse::format_usage(command_path(app), help_only(), names.empty() ? "" : names + "} ...",
                                argparse::usage_width());
}

}  // namespace batchai::cli
