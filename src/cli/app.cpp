// argv → command → output → exit code.
#include "app.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "argv_prepass.hpp"
#include "batchai/common/errors.hpp"
#include "batchai/common/json_util.hpp"
#include "batchai/common/log.hpp"
#include "batchai/query/jmespath.hpp"
#include "command.hpp"
#include "commands/registry.hpp"
#include "commands/version_command.hpp"
#include "completion_names.hpp"
#include "compose.hpp"
#include "output/formats.hpp"

namespace batchai::cli {
namespace {

constexpr int kUsageExit = 2;
constexpr int kShowNotFoundExit = 3;

// The deepest subcommand the parser had reached.
CLI::App* deepest(CLI::App* app) {
  for (;;) {
    auto subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.front();
  }
}

int usage_error(CliContext& ctx, const CLI::App* app, const std::string& message) {
  auto it = ctx.commands.find(app);
  // Commands that read their own arguments (`train`) show the bare usage line, as groups do.
  bool argparse_usage = it != ctx.commands.end() && it->second->argument_style() == ArgumentStyle::kArgparse;
  std::cerr << (argparse_usage ? it->second->usage() : group_usage(app)) << "\n"
            << command_path(app) << ": error: " << message << std::endl;
  return kUsageExit;
}

// CLI11's wording → argparse's, where the two differ.
std::string argparse_message(const CLI::ParseError& e) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    auto colon = what.find(": ");
    return "unrecognized arguments: " + (colon == std::string::npos ? what : what.substr(colon + 2));
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) return "argument " + what;
  return what;
}

log::Verbosity verbosity(const GlobalOptions& g) {
  if (g.debug) return log::Verbosity::kDebug;
  if (g.verbose) return log::Verbosity::kVerbose;
  if (g.only_show_errors) return log::Verbosity::kErrorsOnly;
  return log::Verbosity::kNormal;
}

void print_error(const std::string& message) { log::error(message); }  // "ERROR: <message>" on stderr

// Ctrl-C ends the process at once with exit code 0 (commands marked exit_zero_on_interrupt).
void exit_zero_on_interrupt() {
  std::signal(SIGINT, [](int) { std::_Exit(0); });
}

// The current exception, when it is not one of the project's typed errors (nlohmann's, the
// standard library's), in the user's terms: never a C++ exception text such as
// "[json.exception.type_error.302] ..." or "std::bad_alloc". Call inside a catch block.
std::string describe_unexpected() {
  try {
    throw;
  } catch (const nlohmann::json::exception& e) {
    return "A JSON value is not what the command expected: " + json_error_text(e) + ".";
  } catch (const std::bad_alloc&) {
    return "Out of memory: the command needed more memory than this machine could give. Narrow the --query or "
           "give a smaller input.";
  } catch (const std::length_error&) {
    return "A value is too large to process. Give a smaller input.";
  } catch (const std::regex_error&) {
    return "A value is too long or too complex to check. Give a shorter one.";
  } catch (const std::out_of_range&) {
    return "A number in the input is out of range.";
  } catch (const std::invalid_argument&) {
    return "A value in the input is not a number where a number is expected.";
  } catch (const std::exception& e) {
    return e.what();  // the standard library's system and filesystem errors say what failed, and where
  } catch (...) {
    return "An unexpected error stopped the command.";
  }
}

// `keep` (when given) receives the printed result, so that the executable can end without
// freeing it.
int run_command(CliContext& ctx, int argc, char** argv, Json* keep) {
  CLI::App root("Manage Batch AI resources on this machine: workspaces, clusters, experiments, jobs, "
                "file servers, plus the `group` and `storage` commands of the Batch AI tutorial.",
                "batchai");
  root.require_subcommand(0, 1);
  root.footer("\nRun `batchai <group> -h` for the commands of a group.\n");
  if (const char* output = std::getenv("AZURE_CORE_OUTPUT"); output != nullptr && *output != '\0') {
    ctx.globals.output = output;
  }
  // `batchai --version`, alone, as az's: the version lines, no command tree.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << version_text(ctx) << std::flush;
    return 0;
  }
  register_all_commands(root, ctx, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));

  Prepass pre = prepass(root, ctx, argc, argv);
  if (pre.outcome == Prepass::Outcome::kUsageError) return usage_error(ctx, pre.app, pre.message);
  if (pre.outcome == Prepass::Outcome::kCommandNotFound) {
    print_error(pre.message);
    std::cerr << pre.hint << std::flush;
    return kUsageExit;
  }
  std::vector<const char*> args;
  for (const auto& a : pre.argv) args.push_back(a.c_str());
  try {
    root.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp&) {
    std::cout << root.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << root.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ArgumentMismatch& e) {
    // "--name: 1 required TEXT missing" → argparse's "argument --name/-n: expected one argument".
    CLI::App* app = deepest(&root);
    std::string what = e.what();
    std::string name = what.substr(0, what.find(':'));
    auto it = ctx.commands.find(app);
    std::string display = it != ctx.commands.end() ? it->second->display_of(name) : name;
    return usage_error(ctx, app, "argument " + display + ": expected one argument");
  } catch (const CLI::ParseError& e) {
    return usage_error(ctx, deepest(&root), argparse_message(e));
  }
  if (ctx.help_app != nullptr || ctx.selected == nullptr) {
    std::cout << root.help();
    return 0;
  }
  // Hidden: BATCHAI_PARSE_ONLY=1 prints the parsed values as JSON instead of running the command
  // (tests/cli/argparse_compat_test.py compares them with Python's argparse).
  if (const char* only = std::getenv("BATCHAI_PARSE_ONLY"); only != nullptr && *only != '\0') {
    std::cout << ctx.selected->parsed_values().dump() << std::endl;
    return 0;
  }
  Command& command = *ctx.selected;
  command.set_verbatim(std::move(pre.verbatim));
  const GlobalOptions& g = ctx.globals;
  log::init(verbosity(g));
  if (!g.subscription.empty()) log::debug("--subscription " + g.subscription + " (local control plane)");

  output::RenderOptions render;
  try {
    render.format = output::parse_format(g.output);
  } catch (const UsageError& e) {
    return usage_error(ctx, &command.app(), e.what());
  }
  std::optional<query::Expression> expression;
  if (!g.query.empty()) {
    try {
      expression = query::Expression::compile(g.query);
    } catch (const query::QueryError& e) {
      return usage_error(ctx, &command.app(),
                         "argument --query: invalid jmespath_type value: '" + g.query + "' (" +
                             query::to_string(e.kind()) + " error at position " + std::to_string(e.position()) +
                             ": " + e.what() + ")");
    }
  }

  if (command.exits_zero_on_interrupt()) exit_zero_on_interrupt();
  try {
    CommandResult outcome = command.execute();
    std::optional<Json>& result = outcome.document;
    if (!result) return outcome.exit_code;  // commands that return nothing print nothing, in every format
    render.transformer = command.transformer();
    render.color = isatty(STDOUT_FILENO) != 0;
    std::string text;
    if (expression) {
      output::OJson data = expression->evaluate(output::to_ordered(std::move(*result)));
      if (data.is_null()) return outcome.exit_code;
      render.query_active = true;
      text = output::render(data, render);
    } else {
      text = output::render_sorted(std::move(*result), render);
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (keep != nullptr) *keep = std::move(*result);
    return outcome.exit_code;
  } catch (const UsageError& e) {
    return usage_error(ctx, &command.app(), e.what());
  } catch (const NotFound& e) {
    print_error(e.what());
    return command.is_show() ? kShowNotFoundExit : e.exit_code();
  } catch (const Error& e) {
    print_error(e.what());
    return e.exit_code();
  } catch (const query::QueryError& e) {
    print_error(std::string("Invalid --query result: ") + e.what());
    return 1;
  } catch (...) {
    print_error(describe_unexpected());
    return 1;
  }
}

}  // namespace

int run(int argc, char** argv) {
  // Bash completion's names, on every <TAB>: no composition, no command tree (completion_names.hpp).
  if (argc >= 2 && std::string(argv[1]) == kCompleteNamesCommand) return complete_names(argc, argv);
  Json printed;
  int code = 1;
  try {
    std::unique_ptr<CliContext> ctx = compose();
    code = run_command(*ctx, argc, argv, &printed);
  } catch (const Error& e) {
    print_error(e.what());
    return e.exit_code();
  } catch (...) {
    print_error(describe_unexpected());
    return 1;
  }
  // The store is closed and the output written; freeing a large result (a 10,000-job list is
  // a tree of about a million nodes) would only delay the exit, so end without destructors.
  if (!printed.is_null()) {
    std::cout.flush();
    std::fflush(nullptr);
    std::quick_exit(code);
  }
  return code;
}

}  // namespace batchai::cli
