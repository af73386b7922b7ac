// The tools' options as people read them: the group each option is listed under and the placeholder
// of its value, in one table (option_docs.cpp) that --help, the man pages' OPTIONS sections
// (generated at build time from `TOOL --help-roff`) and the option test all read; and GNU-style
// parse errors ("unrecognized option '--closur'; did you mean '--closure'?").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace mlc::tools {

// The group of the context options (where tracing looks), the one a coverage run takes.
inline constexpr std::string_view kContextGroup = "Context (where tracing looks)";

// One row of the table: an option's long name, its group and its value's placeholder ("" for flags).
struct OptionDoc {
  std::string_view name;
  std::string_view group;
  std::string_view placeholder;
};

// Sets the group and placeholder of every option of `app` (and of its subcommands) that the table
// lists; an option it does not list stays in "Other options" with CLI11's own placeholder, and the
// option test names it. Adds the hidden --help-roff flag, which prints the man page's OPTIONS section.
void document_options(CLI::App& app);

// `sub` takes only these groups of its parent's options (coverage: the context ones): its --help lists
// only them, and any other of its parent's options is a usage error ("option '--closure' does not
// apply to 'coverage'") rather than silently ignored. Without a call, a subcommand takes them all.
void take_parent_groups(CLI::App& sub, std::vector<std::string> groups);

// The OPTIONS section (roff) of `app`, group by group, as --help lists them; subcommands after.
std::string roff_options(const CLI::App& app);

// app.parse() with GNU-style messages on standard error. Returns -1 when the run goes on, else the
// exit status (0 after --help, --version or --help-roff; 2 for a usage error).
int parse_gnu(CLI::App& app, int argc, char** argv);

// GNU-style "Usage: tool [OPTION]... FILE..." in --help, and for a subcommand its own line plus the
// options of its parent that it takes (explain --help lists the context and output options).
class GnuUsage : public CLI::Formatter {
 public:
  explicit GnuUsage(std::string usage, std::string subcommand_usage = "")
      : usage_(std::move(usage)), subcommand_usage_(std::move(subcommand_usage)) {}
  std::string make_usage(const CLI::App* app, std::string) const override;
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;

 private:
  std::string usage_, subcommand_usage_;
};

}  // namespace mlc::tools
