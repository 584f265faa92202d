// A leaf command of the tree, declared az-style: options with argparse-like required checks
// and messages, configured defaults from the environment, --ids, confirmation prompts, help
// with an Examples section, the global options, and the handler that returns the result.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "argparse_compat.hpp"
#include "batchai/common/json_util.hpp"
#include "cli_context.hpp"
#include "output/output.hpp"

namespace batchai::cli {

struct OptionSpec {
  bool required = false;
  bool replaced_by_ids = false;       // not needed when --ids is given
  std::string default_value;          // shown in help and returned when absent
  std::string env;                    // configured default (e.g. AZURE_DEFAULTS_GROUP)
  std::vector<std::string> choices;   // allowed values (argparse "invalid choice" otherwise)
  bool integer = false;               // must parse as an int
  bool repeatable = false;            // may be given several times (-L)
  bool many = false;                  // takes several space-separated values (--tags a=b c=d)
  std::string group;                  // help section
};

// The parsed values of one command, by long option name without dashes ("resource-group").
class Args {
 public:
  explicit Args(const class Command& command) : command_(command) {}
  std::optional<std::string> get(const std::string& key) const;
  std::string str(const std::string& key) const;  // a required (or defaulted) value
  std::optional<int> integer(const std::string& key) const;
  bool flag(const std::string& key) const;
  std::vector<std::string> all(const std::string& key) const;
  // ArgumentStyle::kVerbatim: the words after the command name, exactly as in argv.
  const std::vector<std::string>& verbatim() const;
  // The top-level keys the table reads when the output is a table without --query (a list
  // handler may then return documents holding only those); empty otherwise: full documents.
  std::vector<std::string> table_fields() const;

 private:
  const Command& command_;
};

// What a handler gives back: the document to print (none: print nothing, in every format) and
// the process's exit code. Only app.cpp's run turns the code into the exit (`job wait`, the
// hidden job commands and `train` return codes of their own).
struct CommandResult {
  std::optional<Json> document;
  int exit_code = 0;

  CommandResult() = default;
  CommandResult(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): `return std::nullopt;`
  CommandResult(std::optional<Json> doc) : document(std::move(doc)) {}  // NOLINT: `return json;`
  CommandResult(Json doc) : document(std::move(doc)) {}                 // NOLINT
  static CommandResult exit_code_only(int code) {
    CommandResult r;
    r.exit_code = code;
    return r;
  }
};

using Handler = std::function<CommandResult(const Args&)>;

// How a command's arguments reach it.
enum class ArgumentStyle {
  kArgparse,  // az's argparse rules (argv_prepass), plus the global options: every user command
  kNative,    // CLI11 reads the options declared on app() as they are, typed (`train`)
  kVerbatim,  // nothing parsed: the handler gets the words after the command name untouched
              // (Args::verbatim(); `_rank-exec`, whose program arguments must pass as given)
};

class Command {
 public:
  Command(CLI::App& parent, CliContext& ctx, const std::string& name, const std::string& summary);

  // `names` as CLI11 takes them: "--name,-n".
  Command& option(const std::string& names, const std::string& help, OptionSpec spec = {});
  Command& flag(const std::string& names, const std::string& help, const std::string& group = {});
  Command& example(const std::string& description, const std::string& command_line);
  // Adds `--ids` (space-separated ARM ids replacing the options marked replaced_by_ids).
  Command& ids();
  // Adds --yes/-y and asks for confirmation unless it is given.
  Command& confirmation();
  // `show` commands: NotFound exits 3.
  Command& show();
  // `fields`: the top-level keys `transformer` reads (see Args::table_fields).
  Command& table(output::TableTransformer transformer, std::vector<std::string> fields = {});
  // Left out of help (internal commands the job machinery runs itself).
  Command& hidden();
  // How the arguments are read (default kArgparse); kNative and kVerbatim drop the global options.
  Command& arguments(ArgumentStyle style);
  // Ctrl-C ends the command with exit code 0 (docs/output.md §2.5: `job file stream`, `node exec`).
  Command& exit_zero_on_interrupt();
  Command& handler(Handler handler);

  // Required-option check (argparse wording), confirmation, then the handler.
  CommandResult execute();
  // The options as az's argparse parser holds them: -h/--help, the global options in az's order,
  // then the command's own; each with the CLI11 option that receives its values.
  struct TableRow {
    argparse::ArgAction action;
    const CLI::Option* option = nullptr;
  };
  std::vector<TableRow> argparse_table() const;
  // The values CLI11 holds after parsing, by long option name ("resource-group": "rg", flags
  // true, repeated and multi-value options as lists): the hidden BATCHAI_PARSE_ONLY output.
  Json parsed_values() const;
  std::string usage() const;  // argparse's usage line of the command
  // "--name/-n" for an option named "--name" or "-n" (the name itself when unknown).
  std::string display_of(const std::string& name) const;
  const output::TableTransformer& transformer() const { return transformer_; }
  bool is_show() const { return is_show_; }
  ArgumentStyle argument_style() const { return style_; }
  bool exits_zero_on_interrupt() const { return zero_on_interrupt_; }
  // kVerbatim: the argv words after the command name (set by the prepass's caller).
  void set_verbatim(std::vector<std::string> words) { verbatim_ = std::move(words); }
  CLI::App& app() { return *app_; }

 private:
  friend class Args;
  struct Entry {
    std::string key;
    std::string display;  // "--name/-n"
    OptionSpec spec;
    CLI::Option* option = nullptr;
    bool is_flag = false;
  };
  const Entry* find(const std::string& key) const;
  void confirm() const;

  CliContext& ctx_;
  CLI::App* app_;
  std::vector<Entry> entries_;
  std::vector<std::pair<std::string, std::string>> examples_;
  output::TableTransformer transformer_;
  std::vector<std::string> table_fields_;
  Handler handler_;
  bool is_show_ = false;
  bool confirmation_ = false;
  bool zero_on_interrupt_ = false;
  ArgumentStyle style_ = ArgumentStyle::kArgparse;
  std::vector<CLI::Option*> globals_;  // removed for kNative and kVerbatim
  std::vector<std::string> verbatim_;
};

// Adds a command group (e.g. "cluster"); named alone it prints its help.
CLI::App& add_group(CLI::App& parent, CliContext& ctx, const std::string& name, const std::string& summary);
// Adds a leaf command owned by ctx.
Command& add_command(CLI::App& parent, CliContext& ctx, const std::string& name, const std::string& summary);

}  // namespace batchai::cli
