// The option table of both tools and what reads it: --help's groups and placeholders, the man
// pages' OPTIONS sections (roff, generated at build time) and GNU-style parse errors. A new option
// gets a row here; one without a row is still documented (under "Other options"), and the option
// test lists it so that it gets one.
#include "option_docs.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include "common/paths.h"

namespace mlc::tools {
namespace {

constexpr std::string_view kContext = kContextGroup;
constexpr std::string_view kLoader = "Loader (what is loaded, and how)";
constexpr std::string_view kOutput = "Output";
constexpr std::string_view kCi = "CI (baselines and the exit status)";
constexpr std::string_view kConfirm = "Confirming with the compiler";
constexpr std::string_view kStubs = "Stubs and CMake patches";
constexpr std::string_view kOther = "Other options";

// The table. Group order on screen and in the man pages follows the first row of each group.
constexpr OptionDoc kOptionDocs[] = {
    {"--with", kLoader, "LIB"},
    {"--python", kLoader, ""},  // --python or --python=EXE (a value only after '=')
    {"--library-path", kLoader, "DIR"},
    {"--sysroot", kLoader, "DIR"},
    {"--cpu-level", kLoader, "LEVEL"},
    {"--closure", kLoader, ""},
    {"--only-named", kLoader, ""},
    {"--backend", kContext, "musa|hip"},
    {"--build-dir", kContext, "DIR"},
    {"--porting-dir", kContext, "DIR"},
    {"--source-root", kContext, "DIR"},
    {"--cmake-lists", kContext, "FILE"},
    {"--sdk-home", kContext, "DIR"},
    {"--cuda-home", kContext, "DIR"},
    {"--mapping", kContext, "PATH"},
    {"--codegen-yaml", kContext, "FILE"},
    {"--no-reconfigure", kContext, ""},
    {"--cache-dir", kContext, "DIR"},
    {"--no-cache", kContext, ""},
    {"--format", kOutput, "FORMAT"},
    {"--output", kOutput, "FILE"},
    {"--json-report", kOutput, "FILE"},
    {"--color", kOutput, "WHEN"},
    {"--quiet", kOutput, ""},
    {"--runtime", kOutput, ""},
    {"--baseline", kCi, "FILE"},
    {"--update-baseline", kCi, "FILE"},
    {"--fail-on", kCi, "WHICH"},
    {"--confirm", kConfirm, ""},
    {"--no-confirm", kConfirm, ""},
    {"--confirm-budget", kConfirm, "N"},
    {"--verbose", kConfirm, ""},
    {"--report", kStubs, "REPORT.json"},
    {"--out-cpp", kStubs, "PATH"},
    {"--out-header", kStubs, "PATH"},
    {"--namespace", kStubs, "NS"},
    {"--style", kStubs, "STYLE"},
    {"--stub", kStubs, "CLASS"},
    {"--version-guard", kStubs, "N"},
    {"--cmake-patch", kStubs, "PATH"},
    {"--apply", kStubs, ""},
    {"--prune", kStubs, ""},
    {"--dry-run", kStubs, ""},
    {"--no-runtime", kStubs, ""},
    {"--c10", kStubs, ""},
    {"--no-c10", kStubs, ""},
};

// The groups of its parent's options a subcommand takes (absent: all of them).
std::map<const CLI::App*, std::vector<std::string>>& parent_groups() {
  static std::map<const CLI::App*, std::vector<std::string>> groups;
  return groups;
}

// Why `value` is no value for a SECONDS or N placeholder ("not a number", "less than 0", "not a whole
// number"); "" when it is one, or the placeholder takes no number.
std::string number_refusal(const std::string& placeholder, const std::string& value) {
  if (placeholder != "SECONDS" && placeholder != "N") return "";
  char* end = nullptr;
  errno = 0;
  double number = std::strtod(value.c_str(), &end);
  return value.empty() || *end != '\0' || errno != 0 || !std::isfinite(number) ? "not a number"
         : number < 0                                                          ? "less than 0"
         : placeholder == "N" && number != std::floor(number)                  ? "not a whole number"
                                                                               : "";
}

// "python", "python3", "python3.11": a word that names an interpreter rather than a file to check.
bool names_an_interpreter(std::string_view arg) {
  const std::string base = base_name(arg);
  if (base.rfind("python", 0) != 0) return false;
  return std::all_of(base.begin() + 6, base.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool parent_group_applies(const CLI::App& sub, const std::string& group) {
  auto it = parent_groups().find(&sub);
  return it == parent_groups().end() || std::find(it->second.begin(), it->second.end(), group) != it->second.end();
}

const OptionDoc* row_for(const CLI::Option* opt) {
  for (const auto& l : opt->get_lnames())
    for (const auto& d : kOptionDocs)
      if (d.name.substr(2) == l) return &d;
  return nullptr;
}

// Groups in table order, then any other group; the hidden ones ("") never.
std::vector<std::string> groups_of(const CLI::App& app) {
  std::vector<std::string> out;
  auto add = [&](const std::string& g) {
    if (!g.empty() && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  };
  std::vector<std::string> present;
  for (const auto* opt : app.get_options([](const CLI::Option* o) { return o->nonpositional(); }))
    present.push_back(opt->get_group());
  for (const auto& d : kOptionDocs)
    if (std::find(present.begin(), present.end(), std::string(d.group)) != present.end()) add(std::string(d.group));
  for (const auto& g : present) add(g);
  return out;
}

std::string tool_name(const CLI::App& app) {
  const CLI::App* top = &app;
  while (top->get_parent()) top = top->get_parent();
  return top->get_name();
}

// roff escapes: a backslash is doubled, every '-' is a hyphen-minus (\-), a line never starts with '.' or '\''.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string roff_option(const CLI::Option* opt) {
  std::string names;
  for (const auto& s : opt->get_snames()) names += (names.empty() ? "" : ", ") + std::string("\\fB\\-") + s + "\\fR";
  for (const auto& l : opt->get_lnames())
    names += (names.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + roff(l) + "\\fR";
  const OptionDoc* d = row_for(opt);
  std::string placeholder = d ? std::string(d->placeholder) : (opt->get_expected_max() > 0 ? "VALUE" : "");
  if (opt->get_lnames() == std::vector<std::string>{"python"}) names += "[=\\fIEXE\\fR]";
  if (!placeholder.empty()) names += " \\fI" + roff(placeholder) + "\\fR";
  return ".TP\n" + names + "\n" + roff(opt->get_description()) + "\n";
}

std::string roff_groups(const CLI::App& app) {
  std::string out;
  for (const auto& g : groups_of(app)) {
    out += ".SS " + roff(g) + "\n";
    for (const auto* opt :
         app.get_options([&](const CLI::Option* o) { return o->nonpositional() && o->get_group() == g; }))
      out += roff_option(opt);
  }
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest option a typo meant: an unambiguous prefix, else the one nearest by edit distance (at most 2).
std::string closest_option(const std::vector<const CLI::App*>& apps, const std::string& typed) {
  std::vector<std::string> names;
  for (const auto* a : apps)
    for (const auto* opt : a->get_options([](const CLI::Option* o) { return o->nonpositional(); })) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
  std::vector<std::string> prefixed;
  for (const auto& n : names)
    if (typed.size() > 2 && n.rfind(typed, 0) == 0) prefixed.push_back(n);
  if (prefixed.size() == 1) return prefixed.front();
  std::string best;
  size_t best_d = 3;
  for (const auto& n : names) {
    size_t d = edit_distance(typed, n);
    if (d < best_d) best_d = d, best = n;
  }
  return best;
}

const CLI::Option* find_option(const std::vector<const CLI::App*>& apps, const std::string& name) {
  for (const auto* a : apps)
    if (const auto* o = a->get_option_no_throw(name)) return o;
  return nullptr;
}

int usage_error(const CLI::App& app, const std::string& message) {
  const std::string tool = tool_name(app);
  if (!message.empty()) std::fprintf(stderr, "%s: %s\n", tool.c_str(), message.c_str());
  if (message.empty()) {
    auto f = std::dynamic_pointer_cast<GnuUsage>(app.get_formatter());
    if (f) std::fprintf(stderr, "%s", f->make_usage(&app, "").c_str());
  }
  std::fprintf(stderr, "Try '%s --help' for more information.\n", tool.c_str());
  return 2;
}

}  // namespace

void take_parent_groups(CLI::App& sub, std::vector<std::string> groups) { parent_groups()[&sub] = std::move(groups); }

void document_options(CLI::App& app) {
  // Operands are named by their own name (FILE_OR_DIR, SYMBOL), not by CLI11's "TEXT".
  for (auto* opt : app.get_options([](const CLI::Option* o) { return !o->nonpositional(); })) opt->type_name("");
  for (auto* opt : app.get_options([](const CLI::Option* o) { return o->nonpositional(); })) {
    if (opt->get_group().empty()) continue;  // hidden
    if (const OptionDoc* d = row_for(opt)) {
      opt->group(std::string(d->group));
      opt->type_name(std::string(d->placeholder));
    } else if (opt->get_group() == "Options" && opt->get_lnames() != std::vector<std::string>{"help"} &&
               opt->get_lnames() != std::vector<std::string>{"version"}) {
      opt->group(std::string(kOther));
    }
  }
  static const std::string roff_help = "the man page's OPTIONS section, in roff";
  if (!app.get_parent()) app.add_flag("--help-roff", roff_help)->group("");
  for (auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) document_options(*sub);
}

std::string roff_options(const CLI::App& app) {
  std::string out = roff_groups(app);
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    out += ".SS " + roff(sub->get_name() + ": " + sub->get_description()) + "\n";
    for (const auto* opt : sub->get_options([](const CLI::Option* o) { return !o->nonpositional(); }))
      out += ".TP\n\\fI" + roff(opt->get_name(true)) + "\\fR\n" + roff(opt->get_description()) + "\n";
    out += roff_groups(*sub);
    out += parent_groups().contains(sub) ? "The context options above apply as well.\n"
                                         : "The options above (context, loader, output and CI) apply as well.\n";
  }
  return out;
}

int parse_gnu(CLI::App& app, int argc, char** argv) {
  if (argc <= 1) return usage_error(app, "");
  // Unknown options and missing values first, in GNU's words (CLI11 would call them "extras").
  std::vector<const CLI::App*> scope = {&app};
  std::map<const CLI::Option*, int> given;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (scope.size() == 1) {
      const CLI::App& top = app;
      auto subs = top.get_subcommands([&](const CLI::App* s) { return s->get_name() == arg; });
      if (!subs.empty() && arg[0] != '-') {
        scope.push_back(subs.front());
        continue;
      }
    }
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string name = arg.substr(0, arg.find('='));
    const bool long_form = name.rfind("--", 0) == 0;
    if (!long_form) name = name.substr(0, 2);  // -ofile, -q
    const CLI::Option* opt = find_option(scope, name);
    if (!opt) {
      std::string near = closest_option(scope, name);
      return usage_error(
          app, (long_form ? "unrecognized option '" + name + "'" : "invalid option -- '" + name.substr(1) + "'") +
                   (near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    // A subcommand refuses the options of its parent it would ignore (coverage --closure).
    if (scope.size() == 2 && scope.back()->get_option_no_throw(name) == nullptr &&
        !parent_group_applies(*scope.back(), opt->get_group()))
      return usage_error(app, "option '" + name + "' does not apply to '" + scope.back()->get_name() + "'");
    bool inline_value = arg.find('=') != std::string::npos || (!long_form && arg.size() > 2);
    // --python takes its interpreter only after '=': "--python /usr/bin/python3 lib.so" would check the
    // interpreter as an input, under the python3 PATH finds: a verdict for a process nobody runs.
    if (name == "--python" && !inline_value && i + 1 < argc && names_an_interpreter(argv[i + 1]))
      return usage_error(
          app, "option '--python' takes its interpreter only after '=': write --python=" + std::string(argv[i + 1]) +
                   " (as written, " + argv[i + 1] + " would be checked as an input)");
    std::string value;
    if (opt->get_expected_max() > 0 && !inline_value) {
      if (i + 1 >= argc) return usage_error(app, "option '" + name + "' requires an argument");
      value = argv[++i];
    } else if (inline_value) {
      value = arg.find('=') != std::string::npos ? arg.substr(arg.find('=') + 1) : arg.substr(2);
    }
    if (opt->get_expected_max() > 0) {
      // A number, said in GNU's words ("invalid --confirm-budget 'abc': not a number"), never CLI11's.
      const OptionDoc* d = row_for(opt);
      std::string placeholder = d ? std::string(d->placeholder) : "";
      if (std::string why = number_refusal(placeholder, value); !why.empty())
        return usage_error(app, "invalid " + opt->get_name() + " '" + value + "': " + why);
      // An option that takes one value, given twice: which one was meant is not for us to guess.
      if (opt->get_expected_max() == 1 && opt->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw &&
          ++given[opt] == 2)
        return usage_error(app, "option '" + opt->get_name() + "' given more than once");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ValidationError& e) {
    // CLI::IsMember says "--format: xml not in {text,json,...}": GNU says which values are valid.
    std::string what = e.what();
    size_t colon = what.find(": "), not_in = what.find(" not in {"), close = what.rfind('}');
    if (colon != std::string::npos && not_in != std::string::npos && close != std::string::npos && not_in > colon) {
      std::string option = what.substr(0, colon), value = what.substr(colon + 2, not_in - colon - 2);
      std::string valid = what.substr(not_in + 9, close - not_in - 9);
      for (size_t at = valid.find(','); at != std::string::npos; at = valid.find(',', at + 2))
        valid.replace(at, 1, ", ");
      return usage_error(app, "invalid argument '" + value + "' for '" + option + "'\nValid arguments are: " + valid);
    }
    return usage_error(app, what);
  } catch (const CLI::ExcludesError& e) {
    // "--closure excludes --only-named"
    std::string what = e.what();
    size_t at = what.find(" excludes ");
    if (at == std::string::npos) return usage_error(app, what);
    return usage_error(
        app, "options '" + what.substr(0, at) + "' and '" + what.substr(at + 10) + "' cannot be used together");
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what());
  }
  if (app.get_option("--help-roff")->count() > 0) {
    std::fputs(roff_options(app).c_str(), stdout);
    return 0;
  }
  return -1;
}

std::string GnuUsage::make_usage(const CLI::App* app, std::string) const {
  if (!app->get_parent()) return usage_ + "\n";
  if (!subcommand_usage_.empty() && subcommand_usage_.find(" " + app->get_name() + " ") != std::string::npos)
    return subcommand_usage_ + "\n";
  // The subcommand's own line of the tool's usage ("musa-linkcheck coverage [OPTION]... SOURCE_DIR...").
  std::stringstream lines(usage_);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find(tool_name(*app) + " " + app->get_name() + " ");
    if (at != std::string::npos) return "Usage: " + line.substr(at) + "\n";
  }
  return usage_ + "\n";
}

namespace {

// Words of `text` filled into lines of at most `width` columns, each after `indent`.
std::string fill(const std::string& text, size_t first_column, size_t indent, size_t width) {
  std::string out;
  size_t column = first_column;
  std::stringstream words(text);
  bool first = true;
  for (std::string word; words >> word;) {
    if (!first && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  return out;
}

}  // namespace

std::string gnu_option_line(const CLI::Option* opt) {
  constexpr size_t kColumn = 30, kWidth = 79;
  std::string names;
  const auto snames = opt->get_snames();
  for (const auto& s : snames) names += (names.empty() ? "-" : ", -") + s;
  for (const auto& l : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  if (snames.empty()) names = "    " + names;  // long options line up after "-o, "
  const OptionDoc* d = row_for(opt);
  std::string placeholder = d ? std::string(d->placeholder) : (opt->get_expected_max() > 0 ? "VALUE" : "");
  if (opt->get_lnames() == std::vector<std::string>{"python"}) {
    names += "[=EXE]";  // a value only after '=': "--python lib.so" keeps lib.so an input
  } else if (!placeholder.empty()) {
    names += " " + placeholder;
  }
  std::string description = opt->get_description();
  if (opt->get_lnames() == std::vector<std::string>{"help"}) description = "display this help and exit";
  if (opt->get_lnames() == std::vector<std::string>{"version"}) description = "output version information and exit";
  if (std::string def = opt->get_default_str();
      !def.empty() && opt->get_expected_max() > 0 && description.find("default") == std::string::npos)
    description += " (default: " + def + ")";
  std::string line = "  " + names;
  if (line.size() + 2 > kColumn) {
    line += "\n" + std::string(kColumn, ' ');
  } else {
    line += std::string(kColumn - line.size(), ' ');
  }
  return line + fill(description, kColumn, kColumn, kWidth) + "\n";
}

std::string GnuUsage::make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const {
  // As GNU tools write it: usage, what the tool does, operands, then the options group by group with
  // their placeholders and choices in the text (no CLI11 markup: no TEXT, REQUIRED, Excludes or {a,b}).
  std::string out = make_usage(app, "");
  out += fill(app->get_description(), 0, 0, 79) + "\n";
  auto positionals = app->get_options([](const CLI::Option* o) { return !o->nonpositional(); });
  if (!positionals.empty()) out += "\n";
  for (const auto* opt : positionals) {
    std::string line = "  " + opt->get_name(true);
    line += line.size() + 2 > 30 ? "\n" + std::string(30, ' ') : std::string(30 - line.size(), ' ');
    out += line + fill(opt->get_description(), 30, 30, 79) + "\n";
  }
  auto group = [&](const std::string& title, const std::vector<const CLI::Option*>& opts) {
    if (opts.empty()) return;
    out += title.empty() ? "\n" : "\n" + title + ":\n";
    for (const auto* opt : opts) out += gnu_option_line(opt);
  };
  const CLI::App* parent = app->get_parent();
  std::vector<std::string> own_names;
  for (const auto* opt : app->get_options()) own_names.push_back(opt->get_name());
  for (const auto& g : groups_of(*app)) {
    if (g == "Options") continue;
    std::vector<const CLI::Option*> opts =
        app->get_options([&](const CLI::Option* o) { return o->nonpositional() && o->get_group() == g; });
    // A subcommand lists the options of its parent it takes, one group each (its own first).
    if (parent && parent_group_applies(*app, g))
      for (const auto* o :
           parent->get_options([&](const CLI::Option* o) { return o->nonpositional() && o->get_group() == g; }))
        if (std::find(own_names.begin(), own_names.end(), o->get_name()) == own_names.end()) opts.push_back(o);
    group(g, opts);
  }
  if (parent) {
    auto mine = groups_of(*app);
    for (const auto& g : groups_of(*parent))
      if (g != "Options" && std::find(mine.begin(), mine.end(), g) == mine.end() && parent_group_applies(*app, g))
        group(g, parent->get_options([&](const CLI::Option* o) { return o->nonpositional() && o->get_group() == g; }));
  }
  std::vector<const CLI::Option*> general =
      app->get_options([](const CLI::Option* o) { return o->nonpositional() && o->get_group() == "Options"; });
  group("", general);
  auto subs = app->get_subcommands([](const CLI::App*) { return true; });
  if (!subs.empty()) {
    out += "\nCommands:\n";
    for (const auto* sub : subs) {
      std::string line = "  " + sub->get_name();
      line += std::string(30 - line.size(), ' ');
      out += line + fill(sub->get_description(), 30, 30, 79) + "\n";
    }
  }
  std::string footer = (parent && app->get_footer().empty()) ? parent->get_footer() : app->get_footer();
  if (!footer.empty()) out += "\n" + footer + "\n";
  return out;
}

}  // namespace mlc::tools
