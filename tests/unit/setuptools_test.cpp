// setup.py read as text: each extension's name and literal sources, and an entry added to a list. Python's
// own parser (the ast module, in a fresh python3) is the oracle for what the file declares, before and
// after the edit.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "setuptools/setup_py.h"
#include "test_support.h"

namespace mlc {
namespace {

using nlohmann::json;
using test::quote;
using test::run;
using test::write_file;

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
    lit = isinstance(s, ast.List) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in s.elts)
    out.append({'line': node.lineno, 'name': n.value if isinstance(n, ast.Constant) else None,
                'sources': [e.value for e in s.elts] if lit else None})
out.sort(key=lambda e: e['line'])
print(json.dumps(out))
)";
  auto r = run("/usr/bin/python3 -c " + quote(py) + " " + quote(path));
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out.empty() ? "[]" : r.out);
}

json ours(const setuptools::SetupPy& s) {
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
  auto s = setuptools::read_setup_py(dir + "/setup.py");
  ASSERT_TRUE(s.ok()) << s.error().to_line();
  EXPECT_EQ(ours(*s), ast_extensions(dir + "/setup.py"));
  ASSERT_EQ(s->extensions.size(), 6u);
  EXPECT_EQ(s->extensions[2].not_literal, "sources= is the variable SRCS, not a literal list");
  EXPECT_EQ(s->extensions[3].not_literal, "sources= holds os.path.join(\"x\", \"y.c\"), not only string literals");
}

// Each literal list takes a new entry in its neighbours' style; Python's parser then sees the old list and
// the entry, and nothing else changed.
TEST(SetupPy, an_added_source_is_in_the_list_pythons_parser_sees_and_the_rest_is_unchanged) {
  std::string dir = test::scratch_dir("setup-py-add");
  write_file(dir + "/setup.py", kSetupPy);
  auto s = setuptools::read_setup_py(dir + "/setup.py");
  ASSERT_TRUE(s.ok());
  const json before = ast_extensions(dir + "/setup.py");
  for (size_t i = 0; i < s->extensions.size(); ++i) {
    const auto& ext = s->extensions[i];
    auto edited = setuptools::with_source_added(*s, ext, "pkg/csrc/new_kernel.cu");
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
  auto edited = setuptools::with_source_added(*s, s->extensions[0], "pkg/csrc/new_kernel.cu");
  EXPECT_NE(edited->find("                'pkg/csrc/ops.cu',\n                'pkg/csrc/new_kernel.cu',\n"), std::string::npos)
      << *edited;
}

TEST(SetupPy, the_built_module_is_mapped_to_its_extension_in_place_and_installed) {
  std::string dir = test::scratch_dir("setup-py-map");
  write_file(dir + "/setup.py", kSetupPy);
  auto s = setuptools::read_setup_py(dir + "/setup.py");
  ASSERT_TRUE(s.ok());
  auto* in_place = setuptools::extension_for(*s, dir + "/pkg/_C.cpython-311-x86_64-linux-gnu.so");
  ASSERT_NE(in_place, nullptr);
  EXPECT_EQ(in_place->name, "pkg._C");
  auto* built = setuptools::extension_for(*s, dir + "/build/lib.linux-x86_64-cpython-311/pkg/_cpu.cpython-311-x86_64-linux-gnu.so");
  ASSERT_NE(built, nullptr);
  EXPECT_EQ(built->name, "pkg._cpu");
  EXPECT_EQ(setuptools::extension_for(*s, dir + "/other/_C.so"), nullptr);
  EXPECT_FALSE(setuptools::read_setup_py(dir + "/missing.py").ok());
}

}  // namespace
}  // namespace mlc
