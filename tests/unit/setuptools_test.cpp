// setup.py read as text: each extension's name and literal sources, and an entry added to a list. Python's
// own parser (the ast module, in a fresh python3) is the oracle for what the file declares, before and
// after the edit.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "build/setuptools/setup_py.h"
#include "report/said.h"
#include "test_support.h"
#include "trace/trace.h"

namespace mlc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::quote;
using test::run;
using test::write_file;

const std::string kPython = "/usr/bin/python3";

// What Python's parser sees: for each call named Extension/CppExtension/CUDAExtension, its name (when a
// literal) and its sources (when a list of literals), else null.
json ast_extensions(const std::string& path) {
  const std::string py = R"(import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
out = []
for node in ast.walk(tree):
    if not isinstance(node, ast.Call):
        continue
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, 'id', None)
    if name not in ('Extension', 'CppExtension', 'CUDAExtension'):
        continue
    args = {k.arg: k.value for k in node.keywords}
    if node.args: args.setdefault('name', node.args[0])
    if len(node.args) > 1: args.setdefault('sources', node.args[1])
    n = args.get('name')
    s = args.get('sources')
    lit = isinstance(s, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in s.elts)
    out.append({'line': node.lineno, 'name': n.value if isinstance(n, ast.Constant) else None,
                'sources': [e.value for e in s.elts] if lit else None})
out.sort(key=lambda e: e['line'])
print(json.dumps(out))
)";
  auto r = run(kPython + " -c " + quote(py) + " " + quote(path));
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out.empty() ? "[]" : r.out);
}

json ours(const build::setuptools::SetupPy& s) {
  json out = json::array();
  for (const auto& e : s.extensions) {
    json sources = nullptr;
    if (e.literal_sources) {
      sources = json::array();
      for (const auto& src : e.sources) sources.push_back(src.value);
    }
    out.push_back({{"line", e.line}, {"name", e.name.empty() ? json(nullptr) : json(e.name)}, {"sources", sources}});
  }
  return out;
}

const char* kSetupPy = R"(import glob, os
from setuptools import setup, Extension
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

SRCS = glob.glob("lib/*.c")
setup(
    name="pkg",  # Extension( in a comment is no call
    ext_modules=[
        CUDAExtension(
            name="pkg._C",
            sources=[
                "pkg/csrc/bind.cpp",  # the bindings
                'pkg/csrc/ops.cu',
            ],
            extra_compile_args={"nvcc": ["-O3"]},
        ),
        cpp_extension.CppExtension("pkg._cpu", ["pkg/cpu/a.cpp", "pkg/cpu/b.cpp"]),
        Extension("pkg._globbed", sources=SRCS),
        Extension(name="pkg._joined", sources=[os.path.join("x", "y.c")]),
        Extension("pkg._escaped", sources=["pkg/odd \"name\".c", r"pkg\raw.c"]),
        Extension("pkg._empty", sources=[]),
    ],
    cmdclass={"build_ext": BuildExtension},
    description="""Extension("not", ["a call"]) inside a string""",
)
)";

TEST(SetupPy, extensions_and_literal_sources_are_those_pythons_parser_sees) {
  std::string dir = test::scratch_dir("setup-py");
  write_file(dir + "/setup.py", kSetupPy);
  auto s = build::setuptools::read_setup_py(dir + "/setup.py");
  ASSERT_TRUE(s.ok()) << s.error().to_line();
  EXPECT_EQ(ours(*s), ast_extensions(dir + "/setup.py"));
  ASSERT_EQ(s->extensions.size(), 6u);
  EXPECT_EQ(s->extensions[2].not_literal, "SRCS is glob.glob(\"lib/*.c\"), not a literal list");
  EXPECT_EQ(s->extensions[3].not_literal, "sources= holds os.path.join(\"x\", \"y.c\"), not only string literals");
}

// Each literal list takes a new entry in its neighbours' style; Python's parser then sees the old list and
// the entry, and nothing else changed.
TEST(SetupPy, an_added_source_is_in_the_list_pythons_parser_sees_and_the_rest_is_unchanged) {
  std::string dir = test::scratch_dir("setup-py-add");
  write_file(dir + "/setup.py", kSetupPy);
  auto s = build::setuptools::read_setup_py(dir + "/setup.py");
  ASSERT_TRUE(s.ok());
  const json before = ast_extensions(dir + "/setup.py");
  for (size_t i = 0; i < s->extensions.size(); ++i) {
    const auto& ext = s->extensions[i];
    auto edited = build::setuptools::with_source_added(*s, ext, "pkg/csrc/new_kernel.cu");
    if (!ext.literal_sources) {
      EXPECT_FALSE(edited.has_value()) << ext.name;
      continue;
    }
    ASSERT_TRUE(edited.has_value()) << ext.name;
    write_file(dir + "/edited.py", *edited);
    json after = ast_extensions(dir + "/edited.py");
    json want = before;
    want[i]["sources"].push_back("pkg/csrc/new_kernel.cu");
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(after[k]["name"], want[k]["name"]);
      EXPECT_EQ(after[k]["sources"], want[k]["sources"]) << ext.name;
    }
  }
  // The multi-line list takes the entry on a line of its own, indented and quoted as its last entry.
  auto edited = build::setuptools::with_source_added(*s, s->extensions[0], "pkg/csrc/new_kernel.cu");
  EXPECT_NE(edited->find("                'pkg/csrc/ops.cu',\n                'pkg/csrc/new_kernel.cu',\n"),
            std::string::npos)
      << *edited;
}

// The list a variable is bound to is the list to edit only when nothing else can bind or change it:
// one assignment, at module level, never appended to.
TEST(SetupPy, a_variable_is_edited_at_its_assignment_only_when_bound_once_at_module_level) {
  const std::string dir = test::scratch_dir("setup-py-variable");
  auto parsed = [&](const std::string& before_setup) {
    write_file(dir + "/setup.py", "from setuptools import setup, Extension\n" + before_setup +
                                      "setup(ext_modules=[Extension(\"m._C\", sources=SRCS)])\n");
    auto s = build::setuptools::read_setup_py(dir + "/setup.py");
    EXPECT_TRUE(s.ok());
    return s->extensions.at(0);
  };
  auto once = parsed("SRCS = [\n    \"a.c\",  # the module\n    'b.c'\n]\n");
  EXPECT_TRUE(once.literal_sources);
  EXPECT_EQ(once.variable, "SRCS");
  EXPECT_EQ(once.variable_line, 2u);
  ASSERT_EQ(once.sources.size(), 2u);
  EXPECT_EQ(once.sources[1].value, "b.c");
  EXPECT_EQ(parsed("SRCS = ['a.c']\nSRCS = ['b.c']\n").not_literal,
            "sources= is the variable SRCS, assigned 2 times, not a literal list");
  EXPECT_EQ(parsed("SRCS = ['a.c']\nSRCS.append('b.c')\n").not_literal,
            "sources= is the variable SRCS, changed by SRCS.append, not a literal list");
  EXPECT_EQ(parsed("SRCS = ['a.c']\nSRCS += ['b.c']\n").not_literal,
            "sources= is the variable SRCS, changed by SRCS +=, not a literal list");
  EXPECT_EQ(parsed("if True:\n    SRCS = ['a.c']\n").not_literal,
            "sources= is the variable SRCS, assigned inside a block, not a literal list");
  EXPECT_EQ(parsed("SRCS = ['a.c', NAME]\n").not_literal, "SRCS holds NAME, not only string literals");
  EXPECT_EQ(parsed("").not_literal, "sources= is the variable SRCS, assigned 0 times, not a literal list");
}

// Every layout a sources list is written in takes the entry so that Python's parser sees the old
// entries and the new one, and no byte outside the brackets changes. Each layout reaches its own branch
// of the editor (a branch no case reached once hid an entry that replaced the last one).
TEST(SetupPy, every_list_layout_takes_the_entry_as_pythons_parser_sees_it) {
  struct Layout {
    const char* name;
    const char* list;
    const char* edited;  // the list after the edit, as written
  };
  const Layout layouts[] = {
      {"one line", R"(["a.c", "b.c"])", R"(["a.c", "b.c", "new.c"])"},
      {"one per line, trailing comma", "[\n    \"a.c\",\n    \"b.c\",\n]",
       "[\n    \"a.c\",\n    \"b.c\",\n    \"new.c\",\n]"},
      {"one per line, no trailing comma", "[\n    \"a.c\",\n    \"b.c\"\n]",
       "[\n    \"a.c\",\n    \"b.c\",\n    \"new.c\"\n]"},
      {"comments between entries", "[\n    \"a.c\",  # first\n    # the second:\n    \"b.c\"  # last\n]",
       "[\n    \"a.c\",  # first\n    # the second:\n    \"b.c\",  # last\n    \"new.c\"\n]"},
      {"comment after a trailing comma", "[\n    'a.c',\n    'b.c',  # last\n]",
       "[\n    'a.c',\n    'b.c',  # last\n    'new.c',\n]"},
      {"empty list", "[]", R"(["new.c"])"},
      {"closing bracket on the last entry's line", "[\"a.c\",\n          \"b.c\"]",
       "[\"a.c\",\n          \"b.c\",\n          \"new.c\"]"},
      {"tuple", R"(("a.c", "b.c"))", R"(("a.c", "b.c", "new.c"))"},
      {"one-element tuple", "(\"a.c\",)", "(\"a.c\", \"new.c\",)"},
      {"empty tuple", "()", "(\"new.c\",)"},
  };
  const std::string dir = test::scratch_dir("setup-py-layouts");
  const std::string head = "from setuptools import setup, Extension\n\nsetup(ext_modules=[Extension(\"m._C\", sources=";
  const std::string tail = ", define_macros=[(\"X\", \"1\")])])\n";
  for (const Layout& l : layouts) {
    SCOPED_TRACE(l.name);
    write_file(dir + "/setup.py", head + l.list + tail);
    const json before = ast_extensions(dir + "/setup.py");
    ASSERT_EQ(before.size(), 1u);
    ASSERT_TRUE(before[0]["sources"].is_array());
    auto s = build::setuptools::read_setup_py(dir + "/setup.py");
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s->extensions.at(0).literal_sources) << s->extensions[0].not_literal;
    auto edited = build::setuptools::with_source_added(*s, s->extensions[0], "new.c");
    ASSERT_TRUE(edited.has_value());
    write_file(dir + "/edited.py", *edited);
    json want = before;
    want[0]["sources"].push_back("new.c");
    EXPECT_EQ(ast_extensions(dir + "/edited.py"), want) << *edited;
    EXPECT_EQ(*edited, head + l.edited + tail);
  }
}

// Sources that are no literal list: the fix says what to write, and Python is the oracle for it (the
// glob does or does not match the file; the os.path.join(...) evaluates, in setup.py's namespace, to
// the file).
TEST(SetupPy, a_glob_or_join_list_is_told_what_to_write_and_python_agrees) {
  const std::string dir = test::scratch_dir("setup-py-hand");
  fs::create_directories(dir + "/csrc/sub");
  for (const char* f : {"csrc/a.cpp", "csrc/b.cpp", "csrc/sub/c.cpp"}) write_file(dir + "/" + f, "\n");
  const std::string module = dir + "/p/_C.cpython-311-x86_64-linux-gnu.so";
  auto fix_words = [&](const std::string& prelude, const std::string& sources, const std::string& file) {
    write_file(dir + "/setup.py", "import glob, os\nfrom setuptools import setup, Extension\n" + prelude +
                                      "setup(ext_modules=[Extension(\"p._C\", sources=" + sources + ")])\n");
    auto fix = trace::setup_py_fix(module, dir + "/" + file);
    EXPECT_TRUE(fix.has_value());
    EXPECT_FALSE(fix->cmake_file.has_value());  // nothing for --apply to write
    return fix && fix->why ? report::words(*fix->why) : std::string();
  };
  // What setup.py's own Python makes of an expression, with setup() a no-op.
  auto evaluated = [&](const std::string& expression) {
    const std::string py =
        "import setuptools, sys, os; setuptools.setup = lambda **k: None; os.chdir(sys.argv[1]); "
        "ns = {'__file__': sys.argv[1] + '/setup.py'}; "
        "exec(open('setup.py').read(), ns); print(sorted(eval(sys.argv[2], ns)) if "
        "sys.argv[2].startswith(('glob', 'sorted')) else eval(sys.argv[2], ns))";
    auto r = run(kPython + " -c " + quote(py) + " " + quote(dir) + " " + quote(expression));
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  const std::string at = "Extension('p._C') at " + dir + "/setup.py:3";

  EXPECT_EQ(fix_words("", "glob.glob(\"csrc/*.cpp\")", "csrc/sub/c.cpp"),
            "add csrc/sub/c.cpp to the sources of " + at +
                ": glob.glob(\"csrc/*.cpp\") does not match it; write sources=glob.glob(\"csrc/*.cpp\") + "
                "[\"csrc/sub/c.cpp\"]");
  EXPECT_EQ(evaluated("glob.glob(\"csrc/*.cpp\")"), "['csrc/a.cpp', 'csrc/b.cpp']\n");

  EXPECT_EQ(fix_words("", "sorted(glob.glob('csrc/*.cpp'))", "csrc/b.cpp"),
            "csrc/b.cpp is already in the sources of " + at +
                " through sorted(glob.glob('csrc/*.cpp')): the module was built before it; rebuild it (python3 "
                "setup.py build_ext --force)");
  EXPECT_EQ(fix_words("", "glob.glob('csrc/**/*.cpp', recursive=True)", "csrc/sub/c.cpp"),
            "csrc/sub/c.cpp is already in the sources of " + at +
                " through glob.glob('csrc/**/*.cpp', recursive=True): the module was built before it; rebuild it "
                "(python3 setup.py build_ext --force)");
  EXPECT_EQ(evaluated("glob.glob('csrc/**/*.cpp', recursive=True)"),
            "['csrc/a.cpp', 'csrc/b.cpp', 'csrc/sub/c.cpp']\n");
  // "**/" matches no directory too.
  EXPECT_EQ(fix_words("", "glob.glob('csrc/**/*.cpp', recursive=True)", "csrc/a.cpp"),
            "csrc/a.cpp is already in the sources of " + at +
                " through glob.glob('csrc/**/*.cpp', recursive=True): the module was built before it; rebuild it "
                "(python3 setup.py build_ext --force)");

  // The siblings' directory expression, and their one literal or their path split into literals.
  EXPECT_EQ(fix_words("ROOT = os.path.dirname(os.path.abspath(__file__))\n",
                      "[os.path.join(ROOT, \"csrc\", \"a.cpp\")]", "csrc/sub/c.cpp"),
            "add os.path.join(ROOT, \"csrc\", \"sub\", \"c.cpp\") to the sources of Extension('p._C') at " + dir +
                "/setup.py:4 (its entries are calls: edit it by hand)");
  EXPECT_EQ(evaluated("os.path.join(ROOT, \"csrc\", \"sub\", \"c.cpp\")"), dir + "/csrc/sub/c.cpp\n");
  EXPECT_EQ(fix_words("d = 'csrc'\n", "[os.path.join(d, 'a.cpp'), os.path.join(d, 'b.cpp')]", "csrc/sub/c.cpp"),
            "add os.path.join(d, 'sub/c.cpp') to the sources of Extension('p._C') at " + dir +
                "/setup.py:4 (its entries are calls: edit it by hand)");
  EXPECT_EQ(evaluated("os.path.join(d, 'sub/c.cpp')"), "csrc/sub/c.cpp\n");
  // Siblings with different directories: no one expression to give.
  EXPECT_EQ(fix_words("d = 'csrc'\n", "[os.path.join(d, 'a.cpp'), os.path.join('csrc', 'b.cpp')]", "csrc/sub/c.cpp"),
            "add csrc/sub/c.cpp to the sources of Extension('p._C') at " + dir +
                "/setup.py:4 (sources= holds os.path.join(d, 'a.cpp'), not only string literals: edit it by hand)");
}

TEST(SetupPy, the_built_module_is_mapped_to_its_extension_in_place_and_installed) {
  std::string dir = test::scratch_dir("setup-py-map");
  write_file(dir + "/setup.py", kSetupPy);
  auto s = build::setuptools::read_setup_py(dir + "/setup.py");
  ASSERT_TRUE(s.ok());
  auto* in_place = build::setuptools::extension_for(*s, dir + "/pkg/_C.cpython-311-x86_64-linux-gnu.so");
  ASSERT_NE(in_place, nullptr);
  EXPECT_EQ(in_place->name, "pkg._C");
  auto* built = build::setuptools::extension_for(
      *s, dir + "/build/lib.linux-x86_64-cpython-311/pkg/_cpu.cpython-311-x86_64-linux-gnu.so");
  ASSERT_NE(built, nullptr);
  EXPECT_EQ(built->name, "pkg._cpu");
  EXPECT_EQ(build::setuptools::extension_for(*s, dir + "/other/_C.so"), nullptr);
  EXPECT_FALSE(build::setuptools::read_setup_py(dir + "/missing.py").ok());
}

// --- A setuptools extension with a source left out of sources= ----------------------------
// The natural call names the module alone: its DWARF names the compiled unit, beside which the
// defining source sits; the fix is setup.py's list; one --apply, one `build_ext --force`, and a fresh
// interpreter imports the module and gets the right answer.

// The module build_ext --inplace wrote for `ext` (a dotted name) below `dir`.
std::string built_module(const std::string& dir, const std::string& ext) {
  std::string rel = ext;
  std::replace(rel.begin(), rel.end(), '.', '/');
  const fs::path folder = (fs::path(dir) / rel).parent_path();
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().filename().string().rfind(fs::path(rel).filename().string() + ".", 0) == 0 &&
        e.path().extension() == ".so")
      return e.path().string();
  return "";
}

test::CommandResult build_ext(const std::string& dir) {
  // --force: setuptools rebuilds an extension only when a source is newer than the module, and the
  // source put back is older.
  return run("cd " + quote(dir) + " && CFLAGS=-g " + kPython + " setup.py -q build_ext --inplace --force");
}

void write_c_project(const std::string& dir) {
  fs::create_directories(dir + "/scaler");
  fs::create_directories(dir + "/csrc");
  write_file(dir + "/setup.py", R"(from setuptools import setup, Extension

setup(
    name="scaler",
    packages=["scaler"],
    ext_modules=[
        Extension(
            "scaler._C",
            sources=[
                "csrc/module.c",
            ],
        ),
    ],
)
)");
  write_file(dir + "/scaler/__init__.py", "");
  write_file(dir + "/csrc/scale.h", "long scale(long x);\n");
  write_file(dir + "/csrc/scale.c", "#include \"scale.h\"\nlong scale(long x) { return 2 * x; }\n");
  write_file(dir + "/csrc/module.c", R"(#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "scale.h"
static PyObject* run_scale(PyObject* self, PyObject* arg) {
  (void)self;
  return PyLong_FromLong(scale(PyLong_AsLong(arg)));
}
static PyMethodDef methods[] = {{"scale", run_scale, METH_O, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
)");
}

// The tests that build a C extension with setup.py build_ext: setuptools and Python.h, checked once for each.
class SetupPyBuildExt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython) ||
        run(kPython + " -c 'import setuptools, sysconfig, os; "
                      "assert os.path.exists(sysconfig.get_paths()[\"include\"] + \"/Python.h\")'")
                .status != 0)
      MLC_SKIP() << kPython << " with setuptools and Python.h (python3-dev, python3-setuptools) is not installed";
  }
};

TEST_F(SetupPyBuildExt, a_source_left_out_of_sources_is_traced_put_back_and_the_module_imports) {
  const std::string dir = test::scratch_dir("setup-py-e2e");
  write_c_project(dir);
  auto built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  const std::string module = built_module(dir, "scaler._C");
  ASSERT_FALSE(module.empty());
  // The real import fails on the one symbol.
  auto before = run("cd " + quote(dir) + " && " + kPython + " -c 'import scaler._C'");
  ASSERT_NE(before.status, 0);
  ASSERT_NE((before.out + before.err).find("undefined symbol: scale"), std::string::npos) << before.out << before.err;

  // The natural call: the module alone.
  auto r =
      run("env -u LD_LIBRARY_PATH " + std::string(MLC_LINKCHECK_BIN) + " --no-cache --format json " + quote(module));
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  json report = json::parse(r.out);
  ASSERT_EQ(report["libraries"][0]["unresolved"].size(), 1u) << r.out << r.err;
  const json& u = report["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["symbol"], "scale");
  EXPECT_EQ(u["classification"], "missing-source");
  EXPECT_EQ(u["origin"]["file"], dir + "/csrc/scale.c");
  EXPECT_EQ(u["fix"]["cmake_file"], dir + "/setup.py");
  EXPECT_EQ(u["fix"]["list"], "sources");
  EXPECT_EQ(u["fix"]["entry"], "csrc/scale.c");
  EXPECT_EQ(u["fix"]["detail"], "add csrc/scale.c to the sources of Extension('scaler._C') at " + dir + "/setup.py:7");

  // One --apply: setup.py's list, as Python's parser reads it, gains the file; nothing else changes.
  const std::string setup_before = test::read_file(dir + "/setup.py");
  auto apply = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH " + std::string(MLC_STUBGEN_BIN) +
                   " --no-cache --apply " + quote(module) + "");
  ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
  // setup.py is the build file the summary counts (no CMake here).
  EXPECT_NE(apply.err.find("musa-stubgen: 0 stubs, 1 build file to patch, 1 file changed, 0 symbols refused\n"),
            std::string::npos)
      << apply.err;
  json exts = ast_extensions(dir + "/setup.py");
  ASSERT_EQ(exts.size(), 1u);
  EXPECT_EQ(exts[0]["sources"], json::array({"csrc/module.c", "csrc/scale.c"}));
  EXPECT_EQ(test::read_file(dir + "/setup.py"),
            std::string(setup_before)
                .insert(setup_before.find("\"csrc/module.c\",") + 16, "\n                \"csrc/scale.c\","));
  // The rebuild links, the module imports and computes, and the tool agrees.
  built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  auto after = run("cd " + quote(dir) + " && " + kPython + " -c 'import scaler._C as m; print(m.scale(21))'");
  EXPECT_EQ(after.status, 0) << after.out << after.err;
  EXPECT_EQ(after.out, "42\n");
  auto again = run("env -u LD_LIBRARY_PATH " + std::string(MLC_LINKCHECK_BIN) + " --no-cache " + quote(module));
  EXPECT_EQ(again.status, 0) << again.out << again.err;
  // A second --apply finds nothing to do and leaves setup.py as it is.
  const std::string setup_after = test::read_file(dir + "/setup.py");
  auto second = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH " + std::string(MLC_STUBGEN_BIN) +
                    " --no-cache --apply " + quote(module) + "");
  EXPECT_EQ(second.status, 0) << second.out << second.err;
  EXPECT_EQ(test::read_file(dir + "/setup.py"), setup_after);
}

// What Python's parser sees of an edit to the list the module-level `name` is bound to: that list's
// values after the edit, and whether the rest of the file (the list without `entry`) is as before.
json ast_variable_edit(const std::string& before, const std::string& after, const std::string& name,
                       const std::string& entry) {
  const std::string py = R"(import ast, json, sys
before, after = (ast.parse(open(p).read()) for p in sys.argv[1:3])
values = None
for node in after.body:
    if isinstance(node, ast.Assign) and [getattr(t, 'id', None) for t in node.targets] == [sys.argv[3]]:
        values = [e.value for e in node.value.elts]
        node.value.elts = [e for e in node.value.elts if getattr(e, 'value', None) != sys.argv[4]]
print(json.dumps({'values': values, 'rest_unchanged': ast.dump(before) == ast.dump(after)}))
)";
  auto r = run(kPython + " -c " + quote(py) + " " + quote(before) + " " + quote(after) + " " + quote(name) + " " +
               quote(entry));
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out.empty() ? "{}" : r.out);
}

// sources=SRCS, SRCS bound once at module level to a literal: the literal is one assignment away, and
// it is where the entry goes.
TEST_F(SetupPyBuildExt, a_list_bound_to_a_variable_is_edited_at_its_assignment_and_the_module_imports) {
  const std::string dir = test::scratch_dir("setup-py-variable-e2e");
  write_c_project(dir);
  std::string setup = test::read_file(dir + "/setup.py");
  setup.replace(setup.find("sources=["),
                std::string("sources=[\n                \"csrc/module.c\",\n            ]").size(), "sources=SRCS");
  setup.insert(setup.find("setup("), "SRCS = [\n    \"csrc/module.c\",\n]\n\n");
  write_file(dir + "/setup.py", setup);
  write_file(dir + "/setup.py.before", setup);
  auto built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  const std::string module = built_module(dir, "scaler._C");
  ASSERT_FALSE(module.empty());
  auto r =
      run("env -u LD_LIBRARY_PATH " + std::string(MLC_LINKCHECK_BIN) + " --no-cache --format json " + quote(module));
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const json u = json::parse(r.out)["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "missing-source");
  EXPECT_EQ(u["fix"]["cmake_file"], dir + "/setup.py");
  EXPECT_EQ(u["fix"]["entry"], "csrc/scale.c");
  EXPECT_EQ(u["fix"]["detail"], "add csrc/scale.c to SRCS (" + dir +
                                    "/setup.py:3), the sources of Extension('scaler._C') at " + dir + "/setup.py:11");
  auto apply = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH " + std::string(MLC_STUBGEN_BIN) +
                   " --no-cache --apply " + quote(module));
  ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
  const json edit = ast_variable_edit(dir + "/setup.py.before", dir + "/setup.py", "SRCS", "csrc/scale.c");
  EXPECT_EQ(edit["values"], json::array({"csrc/module.c", "csrc/scale.c"}));
  EXPECT_EQ(edit["rest_unchanged"], true);
  EXPECT_EQ(test::read_file(dir + "/setup.py"),
            std::string(setup).insert(setup.find("\"csrc/module.c\",") + 16, "\n    \"csrc/scale.c\","));
  built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  auto after = run("cd " + quote(dir) + " && " + kPython + " -c 'import scaler._C as m; print(m.scale(21))'");
  EXPECT_EQ(after.status, 0) << after.out << after.err;
  EXPECT_EQ(after.out, "42\n");
}

// A variable that could hold another list at run time is named and left alone.
TEST_F(SetupPyBuildExt, a_list_that_is_no_literal_is_named_and_left_alone) {
  const std::string dir = test::scratch_dir("setup-py-glob");
  write_c_project(dir);
  std::string setup = test::read_file(dir + "/setup.py");
  setup.replace(setup.find("sources=["),
                std::string("sources=[\n                \"csrc/module.c\",\n            ]").size(), "sources=SRCS");
  setup.insert(setup.find("setup("), "SRCS = [\"csrc/module.c\"]\nSRCS.append(\"csrc/none.c\")\n\n");
  write_file(dir + "/csrc/none.c", "int none;\n");
  write_file(dir + "/setup.py", setup);
  auto built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  const std::string module = built_module(dir, "scaler._C");
  auto r =
      run("env -u LD_LIBRARY_PATH " + std::string(MLC_LINKCHECK_BIN) + " --no-cache --format json " + quote(module));
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  const json u = json::parse(r.out)["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "missing-source");
  EXPECT_EQ(u["fix"]["cmake_file"], nullptr);
  EXPECT_EQ(u["fix"]["detail"],
            "add csrc/scale.c to the sources of Extension('scaler._C') at " + dir +
                "/setup.py:10 (sources= is the variable SRCS, changed by SRCS.append, not a literal list: edit it by "
                "hand)");
  auto apply = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH " + std::string(MLC_STUBGEN_BIN) +
                   " --no-cache --apply " + quote(module) + "");
  EXPECT_EQ(test::read_file(dir + "/setup.py"), setup);
  EXPECT_NE((apply.out + apply.err).find("edit it by hand"), std::string::npos) << apply.out << apply.err;
}

// sources=glob.glob(...): no list to edit, so the fix says what to write. A glob that misses the file
// gets the file beside it; one that takes it means the module was built before the file: a rebuild.
TEST_F(SetupPyBuildExt, a_glob_is_told_whether_it_takes_the_file_and_a_rebuild_fixes_what_it_covers) {
  const std::string dir = test::scratch_dir("setup-py-glob-e2e");
  write_c_project(dir);
  std::string setup = test::read_file(dir + "/setup.py");
  setup.replace(setup.find("sources=["),
                std::string("sources=[\n                \"csrc/module.c\",\n            ]").size(),
                "sources=glob.glob(\"csrc/*.c\")");
  setup.insert(0, "import glob\n");
  write_file(dir + "/setup.py", setup);
  // The module is built before scale.c exists.
  const std::string scale = test::read_file(dir + "/csrc/scale.c");
  fs::remove(dir + "/csrc/scale.c");
  auto built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  write_file(dir + "/csrc/scale.c", scale);
  const std::string module = built_module(dir, "scaler._C");
  auto detail = [&] {
    auto r =
        run("env -u LD_LIBRARY_PATH " + std::string(MLC_LINKCHECK_BIN) + " --no-cache --format json " + quote(module));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    const json u = json::parse(r.out)["libraries"][0]["unresolved"][0];
    EXPECT_EQ(u["classification"], "missing-source");
    EXPECT_EQ(u["fix"]["cmake_file"], nullptr);
    return u["fix"]["detail"].get<std::string>();
  };
  const std::string at = "Extension('scaler._C') at " + dir + "/setup.py:8";
  EXPECT_EQ(detail(), "csrc/scale.c is already in the sources of " + at +
                          " through glob.glob(\"csrc/*.c\"): the module was built before it; rebuild it (python3 "
                          "setup.py build_ext --force)");
  // A glob that does not take it: the sentence gives the expression to write, which Python builds with.
  const std::string narrow = std::string(setup).replace(setup.find("csrc/*.c"), 8, "csrc/m*.c");
  write_file(dir + "/setup.py", narrow);
  EXPECT_EQ(detail(), "add csrc/scale.c to the sources of " + at +
                          ": glob.glob(\"csrc/m*.c\") does not match it; write sources=glob.glob(\"csrc/m*.c\") + "
                          "[\"csrc/scale.c\"]");
  auto apply = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH " + std::string(MLC_STUBGEN_BIN) +
                   " --no-cache --apply " + quote(module));
  EXPECT_EQ(test::read_file(dir + "/setup.py"), narrow);  // said, not written
  EXPECT_NE((apply.out + apply.err).find("write sources=glob.glob"), std::string::npos) << apply.out << apply.err;
  std::string written = narrow;
  written.replace(written.find("glob.glob(\"csrc/m*.c\")"), std::string("glob.glob(\"csrc/m*.c\")").size(),
                  "glob.glob(\"csrc/m*.c\") + [\"csrc/scale.c\"]");
  write_file(dir + "/setup.py", written);
  built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  auto after = run("cd " + quote(dir) + " && " + kPython + " -c 'import scaler._C as m; print(m.scale(21))'");
  EXPECT_EQ(after.status, 0) << after.out << after.err;
  EXPECT_EQ(after.out, "42\n");
}

// Two extensions of one setup.py: p._C calls what csrc/a.cpp defines, which only the sibling p._D
// compiles. An extension module is never a library to link (Python imports it RTLD_LOCAL, and nothing
// links a name like _D.cpython-311-x86_64-linux-gnu): the finding is the source, put into p._C's
// sources. The modules are CppExtensions written against Python's C API alone, so that two compile fast.
TEST(SetupPyExtension, a_source_only_a_sibling_extension_compiles_is_a_missing_source_not_a_library) {
  if (!fs::exists(kPython) || run(kPython + " -c 'import torch.utils.cpp_extension' 2>/dev/null").status != 0)
    MLC_SKIP() << "Debian's python3-torch (torch.utils.cpp_extension) is not installed";
  const std::string dir = test::scratch_dir("setup-py-sibling");
  fs::create_directories(dir + "/p");
  fs::create_directories(dir + "/csrc");
  write_file(dir + "/setup.py", R"(from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="p",
    packages=["p"],
    ext_modules=[
        CppExtension("p._C", ["csrc/c.cpp"], extra_compile_args=["-g"]),
        CppExtension("p._D", ["csrc/d.cpp", "csrc/a.cpp"], extra_compile_args=["-g"]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
)");
  write_file(dir + "/p/__init__.py", "import torch\n");
  write_file(dir + "/csrc/a.cpp", "long twice(long x) { return 2 * x; }\n");
  // Module _<name>: twice(x) through a's definition.
  auto module_source = [](const std::string& name) {
    return "#include <Python.h>\nlong twice(long x);\n"
           "static PyObject* run(PyObject*, PyObject* arg) { return PyLong_FromLong(twice(PyLong_AsLong(arg))); }\n"
           "static PyMethodDef methods[] = {{\"twice\", run, METH_O, \"\"}, {nullptr, nullptr, 0, nullptr}};\n"
           "static PyModuleDef mod = {PyModuleDef_HEAD_INIT, \"_" +
           name + "\", nullptr, -1, methods};\nextern \"C\" PyObject* PyInit__" + name +
           "() { return PyModule_Create(&mod); }\n";
  };
  write_file(dir + "/csrc/c.cpp", module_source("C"));
  write_file(dir + "/csrc/d.cpp", module_source("D"));
  auto built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  auto module_of = [&](const std::string& ext) { return built_module(dir, ext); };
  const std::string module = module_of("p._C");
  ASSERT_FALSE(module.empty());
  auto before = run("cd " + quote(dir) + " && " + kPython + " -c 'import p._D, p._C'");
  ASSERT_NE(before.status, 0);
  ASSERT_NE((before.out + before.err).find("undefined symbol: _Z5twicel"), std::string::npos)
      << before.out << before.err;

  auto r = run("env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin " + std::string(MLC_LINKCHECK_BIN) +
               " --no-cache --format json " + quote(module));
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  json report = json::parse(r.out);
  std::vector<std::string> unresolved;
  for (const auto& lib : report["libraries"])
    for (const auto& u : lib["unresolved"]) unresolved.push_back(u["symbol"]);
  ASSERT_EQ(unresolved, std::vector<std::string>{"_Z5twicel"}) << r.out << r.err;
  const json& u = report["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "missing-source") << r.out;
  EXPECT_EQ(u["origin"]["file"], dir + "/csrc/a.cpp");
  EXPECT_EQ(u["fix"]["cmake_file"], dir + "/setup.py");
  EXPECT_EQ(u["fix"]["entry"], "csrc/a.cpp");
  EXPECT_EQ(u["fix"]["detail"], "add csrc/a.cpp to the sources of CppExtension('p._C') at " + dir + "/setup.py:8");
  EXPECT_EQ(u["reason"], "defined in " + dir + "/csrc/a.cpp:1, which " + module_of("p._D") +
                             " compiles; an extension module is no library to link, so the source belongs in this "
                             "module's sources");
  EXPECT_EQ(r.out.find("target_link_libraries"), std::string::npos) << r.out;

  auto apply = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin " +
                   std::string(MLC_STUBGEN_BIN) + " --no-cache --apply " + quote(module));
  ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
  json exts = ast_extensions(dir + "/setup.py");
  ASSERT_EQ(exts.size(), 2u);
  EXPECT_EQ(exts[0]["sources"], json::array({"csrc/c.cpp", "csrc/a.cpp"}));
  EXPECT_EQ(exts[1]["sources"], json::array({"csrc/d.cpp", "csrc/a.cpp"}));
  built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  auto after = run("cd " + quote(dir) + " && " + kPython + " -c 'import p._C; print(p._C.twice(21))'");
  EXPECT_EQ(after.status, 0) << after.out << after.err;
  EXPECT_EQ(after.out, "42\n");
}

// Real material: torch.utils.cpp_extension's CppExtension (Debian's python3-torch), the way most PyTorch
// extensions are built, with a package whose __init__ imports torch first. The natural call finds the
// one cause the real import fails on (no "install libc10.so": torch's import loads it first), and the
// fix goes into setup.py.
TEST(SetupPyExtension, a_torch_cpp_extension_missing_its_kernel_file_is_one_cause_and_is_put_back) {
  if (!fs::exists(kPython) || run(kPython + " -c 'import torch.utils.cpp_extension' 2>/dev/null").status != 0)
    MLC_SKIP() << "Debian's python3-torch (torch.utils.cpp_extension) is not installed";
  const std::string dir = test::scratch_dir("setup-py-torch");
  fs::create_directories(dir + "/tscale");
  fs::create_directories(dir + "/csrc");
  write_file(dir + "/setup.py", R"(from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="tscale",
    packages=["tscale"],
    ext_modules=[CppExtension("tscale._C", ["csrc/ops.cpp"], extra_compile_args=["-g", "-O0"])],
    cmdclass={"build_ext": BuildExtension},
)
)");
  write_file(dir + "/tscale/__init__.py", "import torch\nfrom . import _C\n");
  write_file(dir + "/csrc/scale_kernel.cpp", "float scale_impl(float x, float by) { return x * by; }\n");
  write_file(dir + "/csrc/ops.cpp", R"(#include <torch/extension.h>
float scale_impl(float x, float by);
at::Tensor scale(const at::Tensor& t, double by) {
  auto out = t.contiguous().clone();
  float* p = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = scale_impl(p[i], static_cast<float>(by));
  return out;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale", &scale); }
)");
  auto built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  const std::string module = built_module(dir, "tscale._C");
  ASSERT_FALSE(module.empty());
  auto before = run("cd " + quote(dir) + " && " + kPython + " -c 'import tscale'");
  ASSERT_NE(before.status, 0);
  ASSERT_NE((before.out + before.err).find("undefined symbol: _Z10scale_implff"), std::string::npos)
      << before.out << before.err;

  auto r = run("env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin " + std::string(MLC_LINKCHECK_BIN) +
               " --no-cache --format json " + quote(module));
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  json report = json::parse(r.out);
  EXPECT_EQ(report["causes"].size(), 0u) << report["causes"].dump();  // no missing library: torch's import loads them
  std::vector<std::string> unresolved;
  for (const auto& lib : report["libraries"])
    for (const auto& u : lib["unresolved"]) unresolved.push_back(u["symbol"]);
  ASSERT_EQ(unresolved, std::vector<std::string>{"_Z10scale_implff"}) << r.out << r.err;
  const json& u = report["libraries"][0]["unresolved"][0];
  EXPECT_EQ(u["classification"], "missing-source");
  EXPECT_EQ(u["origin"]["file"], dir + "/csrc/scale_kernel.cpp");
  EXPECT_EQ(u["fix"]["detail"],
            "add csrc/scale_kernel.cpp to the sources of CppExtension('tscale._C') at " + dir + "/setup.py:7");

  auto apply = run("cd " + quote(dir) + " && env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin " +
                   std::string(MLC_STUBGEN_BIN) + " --no-cache --apply " + quote(module) + "");
  ASSERT_EQ(apply.status, 0) << apply.out << apply.err;
  json exts = ast_extensions(dir + "/setup.py");
  ASSERT_EQ(exts.size(), 1u);
  EXPECT_EQ(exts[0]["sources"], json::array({"csrc/ops.cpp", "csrc/scale_kernel.cpp"}));
  built = build_ext(dir);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  auto after = run("cd " + quote(dir) + " && " + kPython +
                   " -c 'import torch, tscale; print(tscale._C.scale(torch.tensor([1.5, 2.0]), 2.0).tolist())'");
  EXPECT_EQ(after.status, 0) << after.out << after.err;
  EXPECT_EQ(after.out, "[3.0, 4.0]\n");
}

}  // namespace
}  // namespace mlc
