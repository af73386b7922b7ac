// The first hour's leftovers (issue 28 item 3), as a new user meets them: --help as GNU tools write
// it, usage errors in GNU's words before any report, coverage's own options, explain's near misses, a
// hanging --python, and the smaller slips - each as the exact lines printed and the exit status.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;

const std::string kBin = MLC_LINKCHECK_BIN;
const std::string kStubgen = MLC_STUBGEN_BIN;
const std::string kFix = MLC_LOADER_FIXTURES;
const std::string kLib = kFix + "/chain/rpath/libchain_a.so";
const std::string kTryHelp = "Try 'musa-linkcheck --help' for more information.\n";

std::string linkcheck(const std::string& args) { return kBin + " " + args; }

// --help has no CLI11 markup: no TEXT, REQUIRED, Excludes, {a,b} choices or "[default]" brackets;
// --python's optional value is written --python[=EXE], placeholders are words, choices are in the text.
TEST(Leftovers, help_is_written_as_gnu_tools_write_it) {
  for (const std::string& cmd : {kBin + " --help", kBin + " explain --help", kBin + " coverage --help",
                                 kStubgen + " --help"}) {
    auto h = run(cmd);
    EXPECT_EQ(h.status, 0) << cmd;
    EXPECT_EQ(h.out.rfind("Usage: ", 0), 0u) << h.out;
    for (const char* markup : {"Excludes", "REQUIRED", " TEXT", ":{", "{python3}", "Positionals:", "Subcommands:", " ..."})
      EXPECT_EQ(h.out.find(markup), std::string::npos) << cmd << " shows " << markup << "\n" << h.out;
    for (size_t at = 0, nl; (nl = h.out.find('\n', at)) != std::string::npos; at = nl + 1)
      EXPECT_LE(nl - at, 79u) << cmd << ": " << h.out.substr(at, nl - at);
  }
  auto h = run(kBin + " --help");
  EXPECT_NE(h.out.find("\n      --python[=EXE]          check as the Python interpreter loads it"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\n      --format FORMAT         output format: text, json, or for CI sarif (code\n"),
            std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\n      --color WHEN            colour the text report: auto (on a terminal,\n"
                       "                              unless NO_COLOR is set), always or never\n"),
            std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\n  -o, --output FILE           write the report to FILE"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("\n  -h, --help                  display this help and exit\n"), std::string::npos) << h.out;
  auto s = run(kStubgen + " --help");
  EXPECT_NE(s.out.find("\n      --out-cpp PATH          the stub source (default:\n"
                       "                              unimplemented_functions.cpp)\n"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("\n      --style STYLE           stub bodies: throw (default), abort or\n"
                       "                              return-error\n"),
            std::string::npos) << s.out;
}

// coverage --help: its own usage line, one Output group (its --format's choices), the context options
// it reads, and none of the loader, CI or confirm options it would ignore.
TEST(Leftovers, coverage_help_is_its_own) {
  auto h = run(kBin + " coverage --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(h.out.rfind("Usage: musa-linkcheck coverage [OPTION]... SOURCE_DIR...\n", 0), 0u) << h.out;
  size_t output = h.out.find("\nOutput:\n");
  EXPECT_NE(output, std::string::npos) << h.out;
  EXPECT_EQ(h.out.find("\nOutput:\n", output + 1), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("      --format FORMAT         text, json, markdown or html"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("--mapping PATH"), std::string::npos) << h.out;
  for (const char* ignored : {"--closure", "--with", "--python", "--baseline", "--fail-on", "--confirm", "--json-report",
                              "--quiet", "sarif"})
    EXPECT_EQ(h.out.find(ignored), std::string::npos) << ignored << "\n" << h.out;
}

// coverage refuses what it would ignore, as a usage error before reading anything.
TEST(Leftovers, coverage_refuses_the_options_it_would_ignore) {
  std::string dir = test::scratch_dir("cov-src");
  for (const std::string opt : {"--closure", "--baseline b.txt", "--with x.so", "--fail-on none", "--quiet"}) {
    auto r = run(linkcheck("coverage " + opt + " " + quote(dir)));
    EXPECT_EQ(r.status, 2) << opt;
    EXPECT_EQ(r.out, "") << opt;
    std::string name = opt.substr(0, opt.find(' '));
    EXPECT_EQ(r.err, "musa-linkcheck: option '" + name + "' does not apply to 'coverage'\n" + kTryHelp) << opt;
  }
}

}  // namespace
}  // namespace mlc
