// The option table of both tools and what reads it: --help's groups and placeholders, the man
// pages' OPTIONS sections (roff, generated at build time) and GNU-style parse errors. A new option
// gets a row here; one without a row is still documented (under "Other options"), and the option
// test lists it so that it gets one.
#include "option_docs.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace mlc::tools {
namespace {

constexpr std::string_view kContext = "Context (where tracing looks)";
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
    {"--confirm-budget", kConfirm, "SECONDS"},
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
  for (const auto& l : opt->get_lnames()) names += (names.empty() ? "" : ", ") + std::string("\\fB\\-\\-") + roff(l) + "\\fR";
  const OptionDoc* d = row_for(opt);
  std::string placeholder = d ? std::string(d->placeholder) : (opt->get_expected_max() > 0 ? "VALUE" : "");
  if (!placeholder.empty()) names += " \\fI" + roff(placeholder) + "\\fR";
  return ".TP\n" + names + "\n" + roff(opt->get_description()) + "\n";
}

std::string roff_groups(const CLI::App& app) {
  std::string out;
  for (const auto& g : groups_of(app)) {
    out += ".SS " + roff(g) + "\n";
    for (const auto* opt : app.get_options([&](const CLI::Option* o) { return o->nonpositional() && o->get_group() == g; }))
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
    out += "The options above (context, loader, output and CI) apply as well.\n";
  }
  return out;
}

int parse_gnu(CLI::App& app, int argc, char** argv) {
  if (argc <= 1) return usage_error(app, "");
  // Unknown options and missing values first, in GNU's words (CLI11 would call them "extras").
  std::vector<const CLI::App*> scope = {&app};
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
      return usage_error(app, (long_form ? "unrecognized option '" + name + "'" : "invalid option -- '" + name.substr(1) + "'") +
                                  (near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    bool inline_value = arg.find('=') != std::string::npos || (!long_form && arg.size() > 2);
    if (opt->get_expected_max() > 0 && !inline_value) {
      if (i + 1 >= argc) return usage_error(app, "option '" + name + "' requires an argument");
      ++i;
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
      for (size_t at = valid.find(','); at != std::string::npos; at = valid.find(',', at + 2)) valid.replace(at, 1, ", ");
      return usage_error(app, "invalid argument '" + value + "' for '" + option + "'\nValid arguments are: " + valid);
    }
    return usage_error(app, what);
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
  if (app->get_parent() && !subcommand_usage_.empty()) return subcommand_usage_ + "\n";
  return usage_ + "\n";
}

std::string GnuUsage::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
  std::string out = CLI::Formatter::make_help(app, std::move(name), mode);
  if (const CLI::App* parent = app->get_parent(); parent && mode != CLI::AppFormatMode::Sub) {
    // explain falls through to its parent's options: list them (not --help/--version), before the footer.
    std::string footer = make_footer(app);
    std::string groups;
    for (const auto& g : groups_of(*parent)) {
      if (g == "Options") continue;
      groups += make_group(g, false, parent->get_options([&](const CLI::Option* o) {
        return o->nonpositional() && o->get_group() == g;
      }));
    }
    size_t at = footer.empty() ? std::string::npos : out.rfind(footer);
    out.insert(at == std::string::npos ? out.size() : at, groups);
  }
  return out;
}

}  // namespace mlc::tools
