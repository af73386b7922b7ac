// Locating references to undefined symbols in a library's DWARF (dwarf/references.cpp), on a
// library of several units compiled here with the system compiler: only some units refer to the
// undefined symbols, through the PLT, through the GOT (-fno-plt), from code and from data only.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dwarf/references.h"
#include "test_support.h"

namespace mlc {
namespace {

using test::quote;
using test::run;
using test::write_file;

struct Library {
  std::string dir, path, stripped;
};

// The declarations of the variables, as the units below write them and as the sizeof oracle reads them.
const std::string kDeclBig = "struct Big { long v[5]; };\nextern Big missing_data;\n";  // d.cpp
const std::string kDeclVar = "extern \"C\" int missing_var;\n";                         // c.cpp
const std::string kDeclHeld = "namespace ns { extern short missing_held; }\n";          // f.cpp
const std::string kDeclPartial = "extern int missing_partial[6];\n";                    // h.cpp (g.cpp: no size)

// Six units: a.cpp calls missing_fn through the PLT (line 3), b.cpp refers to nothing, c.cpp calls
// it through its GOT slot (-fno-plt, line 4) and reads missing_var, d.cpp's data alone points at
// missing_data, e.cpp refers to nothing, f.cpp's table (which its code reads) points at missing_held;
// g.cpp's code reads missing_partial, declared there without a size, which h.cpp's data alone points
// at, declared with one.
const Library& library() {
  static const Library lib = [] {
    Library l;
    l.dir = test::scratch_dir("dwarf-refs");
    l.path = l.dir + "/librefs.so";
    l.stripped = l.dir + "/librefs-stripped.so";
    write_file(l.dir + "/a.cpp",
               "namespace ns { int missing_fn(int); }\n"
               "int from_a(int x) {\n"
               "  return ns::missing_fn(x) + 1;\n"
               "}\n");
    write_file(l.dir + "/b.cpp",
               "int quiet_b(int x) { return x * 3; }\nint quiet_b2(int x) { return quiet_b(x) + 2; }\n");
    write_file(l.dir + "/c.cpp", "namespace ns { int missing_fn(int); }\n" + kDeclVar +
                                     "int from_c(int x) {\n"
                                     "  return ns::missing_fn(x + missing_var) * 2;\n"
                                     "}\n");
    write_file(l.dir + "/d.cpp", kDeclBig + "Big* table[] = {&missing_data};\n");
    write_file(l.dir + "/e.cpp", "struct Quiet { int q; };\nint quiet_e(const Quiet* q) { return q->q; }\n");
    write_file(l.dir + "/f.cpp", kDeclHeld +
                                     "short* held[] = {&ns::missing_held, nullptr};\n"
                                     "int read_held(int i) { return *held[i]; }\n");
    write_file(l.dir + "/g.cpp",
               "extern int missing_partial[];\nint read_partial(int i) { return missing_partial[i]; }\n");
    write_file(l.dir + "/h.cpp", kDeclPartial + "int* partial_table[] = {missing_partial};\n");
    std::string objects;
    for (std::string unit : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
      std::string flags = unit == "c" ? " -fno-plt" : "";
      auto r = run("c++ -c -fPIC -O2 -g" + flags + " -o " + quote(l.dir + "/" + unit + ".o") + " " +
                   quote(l.dir + "/" + unit + ".cpp"));
      EXPECT_EQ(r.status, 0) << r.err;
      objects += " " + quote(l.dir + "/" + unit + ".o");
    }
    auto r = run("c++ -shared -o " + quote(l.path) + objects);
    EXPECT_EQ(r.status, 0) << r.err;
    r = run("strip --strip-debug -o " + quote(l.stripped) + " " + quote(l.path));
    EXPECT_EQ(r.status, 0) << r.err;
    return l;
  }();
  return lib;
}

TEST(Dwarf, calls_are_located_in_the_units_that_make_them_through_plt_and_got) {
  auto refs = dwarf::references(library().path, {"_ZN2ns10missing_fnEi"});
  ASSERT_EQ(refs.calls.count("_ZN2ns10missing_fnEi"), 1u);
  const auto& sites = refs.calls.at("_ZN2ns10missing_fnEi");
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].file, library().dir + "/a.cpp");
  EXPECT_EQ(sites[0].line, 3);
  EXPECT_EQ(sites[0].function, "from_a(int)");
  EXPECT_EQ(sites[1].file, library().dir + "/c.cpp");  // -fno-plt: call *missing_fn@GOTPCREL(%rip)
  EXPECT_EQ(sites[1].line, 4);
  EXPECT_EQ(sites[1].function, "from_c(int)");
  EXPECT_TRUE(refs.variables.empty());
}

TEST(Dwarf, variables_read_by_code_or_pointed_at_by_data_are_known_with_their_size) {
  auto refs = dwarf::references(library().path,
                                {"_ZN2ns10missing_fnEi", "missing_var", "missing_data", "_ZN2ns12missing_heldE"});
  ASSERT_EQ(refs.variables.count("missing_var"), 1u);
  EXPECT_EQ(refs.variables.at("missing_var"), 4u);
  ASSERT_EQ(refs.variables.count("missing_data"), 1u);  // referenced from d.cpp's data only
  EXPECT_EQ(refs.variables.at("missing_data"), 40u);
  ASSERT_EQ(refs.variables.count("_ZN2ns12missing_heldE"), 1u);  // from f.cpp's table
  EXPECT_EQ(refs.variables.at("_ZN2ns12missing_heldE"), 2u);
  EXPECT_EQ(refs.variables.count("_ZN2ns10missing_fnEi"), 0u);
  EXPECT_EQ(refs.calls.count("missing_var"), 0u);
}

TEST(Dwarf, declared_size_is_the_first_known_size_of_a_variable_and_none_for_a_function) {
  EXPECT_EQ(dwarf::declared_size(library().path, "missing_var"), std::optional<uint64_t>(4));
  EXPECT_EQ(dwarf::declared_size(library().path, "missing_data"), std::optional<uint64_t>(40));
  EXPECT_EQ(dwarf::declared_size(library().path, "_ZN2ns12missing_heldE"), std::optional<uint64_t>(2));
  EXPECT_EQ(dwarf::declared_size(library().path, "missing_partial"), std::optional<uint64_t>(24));  // from h.cpp
  EXPECT_EQ(dwarf::declared_size(library().path, "_ZN2ns10missing_fnEi"), std::nullopt);
  EXPECT_EQ(dwarf::declared_size(library().stripped, "missing_var"), std::nullopt);
}

// The pipeline carries each variable's size in its finding from references(), and stubgen reserves
// that many bytes: the size must be the compiler's sizeof of the variable's declared type, also for
// a variable declared without a size where it is used (g.cpp) and with one in another unit (h.cpp).
// The oracle is a program compiled here from the fixture's own declarations, printing sizeof.
TEST(Dwarf, references_size_each_variable_as_the_compiler_sizes_its_declaration) {
  std::string dir = test::scratch_dir("dwarf-sizeof");
  write_file(
      dir + "/sizes.cpp",
      "#include <cstdio>\n" + kDeclBig + kDeclVar + kDeclHeld + kDeclPartial +
          "int main() {\n"
          "  std::printf(\"missing_var %zu\\nmissing_data %zu\\n_ZN2ns12missing_heldE %zu\\nmissing_partial %zu\\n\",\n"
          "              sizeof missing_var, sizeof missing_data, sizeof ns::missing_held, sizeof missing_partial);\n"
          "}\n");
  auto built = run("c++ -o " + quote(dir + "/sizes") + " " + quote(dir + "/sizes.cpp"));
  ASSERT_EQ(built.status, 0) << built.err;
  auto printed = run(quote(dir + "/sizes"));
  ASSERT_EQ(printed.status, 0) << printed.err;
  std::map<std::string, uint64_t> compiler;
  std::istringstream lines(printed.out);
  std::string name;
  uint64_t size = 0;
  while (lines >> name >> size) compiler[name] = size;
  ASSERT_EQ(compiler.size(), 4u) << printed.out;

  std::set<std::string> names = {"_ZN2ns10missing_fnEi"};
  for (const auto& [n, _] : compiler) names.insert(n);
  auto refs = dwarf::references(library().path, names);
  for (const auto& [n, expected] : compiler) {
    ASSERT_EQ(refs.variables.count(n), 1u) << n;
    EXPECT_EQ(refs.variables.at(n), expected) << n;
  }
  EXPECT_EQ(refs.variables.count("_ZN2ns10missing_fnEi"), 0u);  // a function has no size
}

// A library built with -g at -O0 has no DW_TAG_call_site (GCC emits them only when optimising), so
// each call is located by the line table row holding its instruction, as lld does with a relocation's
// offset. The oracle is the compiler's line table read by binutils: objdump finds each call or tail
// jump to the symbol (through the PLT, or its GOT slot with -fno-plt), addr2line maps its address.
TEST(Dwarf, calls_in_an_unoptimised_build_are_located_where_the_compilers_line_table_puts_them) {
  std::string dir = test::scratch_dir("dwarf-O0");
  std::string lib = dir + "/libdebug.so";
  write_file(dir + "/a.cpp",
             "namespace ns { int missing_fn(int); }\n"
             "int from_a(int x) {\n"
             "  int y = x * 2;\n"
             "  return ns::missing_fn(y) +\n"
             "         ns::missing_fn(x);\n"
             "}\n");
  write_file(dir + "/c.cpp",
             "namespace ns { int missing_fn(int); }\n"
             "struct S { int by_got(int x); };\n"
             "int S::by_got(int x) {\n"
             "  x += 1;\n"
             "  return ns::missing_fn(x);\n"
             "}\n");
  for (std::string unit : {"a", "c"}) {
    std::string flags = unit == "c" ? " -fno-plt" : "";
    auto r = run("c++ -c -fPIC -O0 -g" + flags + " -o " + quote(dir + "/" + unit + ".o") + " " +
                 quote(dir + "/" + unit + ".cpp"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  auto linked = run("c++ -shared -o " + quote(lib) + " " + quote(dir + "/a.o") + " " + quote(dir + "/c.o"));
  ASSERT_EQ(linked.status, 0) << linked.err;

  // The oracle: "ADDR:\tcall ... <_ZN2ns10missing_fnEi@plt>" or "call *...(%rip) # ... <_ZN2ns10missing_fnEi>".
  auto disassembly = run("objdump -d --no-show-raw-insn " + quote(lib));
  ASSERT_EQ(disassembly.status, 0) << disassembly.err;
  std::vector<std::string> addresses;
  std::istringstream insns(disassembly.out);
  bool in_stub = false;  // the PLT stub's own jump through the GOT slot is not a use
  for (std::string line; std::getline(insns, line);) {
    if (line.size() > 2 && line.compare(line.size() - 2, 2, ">:") == 0)
      in_stub = line.find("@plt>:") != std::string::npos;
    bool transfer = !in_stub && (line.find("\tcall") != std::string::npos || line.find("\tjmp") != std::string::npos);
    if (!transfer || line.find("<_ZN2ns10missing_fnEi") == std::string::npos || line.find(':') == std::string::npos)
      continue;
    std::string address = line.substr(0, line.find(':'));
    address.erase(0, address.find_first_not_of(' '));
    addresses.push_back("0x" + address);
  }
  ASSERT_EQ(addresses.size(), 3u) << disassembly.out;
  // GCC records a call site at -O0 only for the call through the GOT (c.cpp), none for a.cpp's two
  // calls through the PLT: those are what the line table alone locates.
  auto call_sites =
      run("readelf --debug-dump=info " + quote(lib) + " | grep -c -e DW_TAG_call_site -e DW_TAG_GNU_call_site");
  EXPECT_LT(std::stoul(call_sites.out), addresses.size())
      << "every call has a DW_TAG_call_site: the fallback goes untested";
  std::string list;
  for (const auto& a : addresses) list += " " + a;
  auto mapped = run("addr2line -f -C -e " + quote(lib) + list);
  ASSERT_EQ(mapped.status, 0) << mapped.err;
  std::vector<std::string> expected;  // "file:line (function)", in address order
  std::istringstream pairs(mapped.out);
  for (std::string function, where; std::getline(pairs, function) && std::getline(pairs, where);) {
    expected.push_back(where + " (" + function + ")");
  }
  ASSERT_EQ(expected.size(), 3u) << mapped.out;
  EXPECT_EQ(expected[0], dir + "/a.cpp:4 (from_a(int))");  // the oracle agrees with the source
  EXPECT_EQ(expected[1], dir + "/a.cpp:5 (from_a(int))");
  EXPECT_EQ(expected[2], dir + "/c.cpp:5 (S::by_got(int))");

  auto refs = dwarf::references(lib, {"_ZN2ns10missing_fnEi"});
  ASSERT_EQ(refs.calls.count("_ZN2ns10missing_fnEi"), 1u);
  std::vector<std::string> located;
  for (const auto& site : refs.calls.at("_ZN2ns10missing_fnEi")) {
    located.push_back(site.file + ":" + std::to_string(site.line) + " (" + site.function + ")");
  }
  EXPECT_EQ(located, expected);

  // And the report says so, as it does for an optimised build.
  auto report = run(std::string(MLC_LINKCHECK_BIN) + " --no-cache " + quote(lib));
  EXPECT_NE(report.out.find(">>> referenced by " + expected[0] + "\n>>>               " + lib + "\n"),
            std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find(">>> referenced by " + expected[2] + "\n"), std::string::npos) << report.out;
}

TEST(Dwarf, a_copy_without_debug_information_locates_nothing) {
  auto refs = dwarf::references(library().stripped, {"_ZN2ns10missing_fnEi", "missing_var", "missing_data"});
  EXPECT_TRUE(refs.calls.empty());
  EXPECT_TRUE(refs.variables.empty());
}

TEST(Dwarf, a_file_that_is_not_elf_locates_nothing) {
  std::string bad = test::scratch_dir("dwarf-bad") + "/libbad.so";
  write_file(bad, "not an ELF file\n");
  auto refs = dwarf::references(bad, {"missing_var"});
  EXPECT_TRUE(refs.calls.empty());
  EXPECT_TRUE(refs.variables.empty());
}

}  // namespace
}  // namespace mlc
