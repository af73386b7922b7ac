// Reads torchgen backend yamls line by line (their file:line is the point: it is what a person edits),
// finds them through the build's custom commands, and maps a kernel symbol back to its entry:
// torchgen names the C++ function after the operator's base name (add.Tensor and add.Scalar are both
// `add`, an out= overload is `add_out`), so overloads are told apart by the schema in
// native_functions.yaml, compared parameter by parameter with the symbol's.
#include "codegen/backend_yaml.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "backend/backend.h"
#include "common/file_io.h"
#include "common/text.h"
#include "common/walk.h"
#include "source/scanner.h"

namespace mlc::codegen {
namespace {

namespace fs = std::filesystem;

// A backend's own kernel list by file name (backend::Backend::kernel_list_file: musa_functions.yaml).
bool is_kernel_list(const std::string& name) {
  for (const backend::Backend* b : backend::all())
    if (!b->kernel_list_file.empty() && name.ends_with(b->kernel_list_file)) return true;
  return false;
}

// A scalar as yaml writes it on one line: comment dropped, quotes removed.
std::string scalar(std::string v) {
  if (size_t h = v.find(" #"); h != std::string::npos) v.resize(h);
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return v;
}

size_t indent_of(const std::string& line) { return line.find_first_not_of(' '); }

void split_op(KernelEntry& e) {
  size_t dot = e.op.find('.');
  e.base = e.op.substr(0, dot);
  e.overload = dot == std::string::npos ? "" : e.op.substr(dot + 1);
  if (size_t paren = e.base.find('('); paren != std::string::npos) e.base.resize(paren);  // "- func: f(Tensor x)"
  if (size_t paren = e.overload.find('('); paren != std::string::npos) e.overload.resize(paren);
  e.op = e.overload.empty() ? e.base : e.base + "." + e.overload;
}

// Top-level `- func: name` items (torch_musa's musa_functions.yaml): a kernel is called only where
// `dispatch:` names one for PrivateUse1; the others are PyTorch's structured kernels, ported.
void read_func_list(const std::vector<std::string>& lines, BackendYaml& y) {
  y.backend = "PrivateUse1";
  y.cpp_namespace = "";
  for (const backend::Backend* b : backend::all())
    if (!b->kernel_list_file.empty() && (y.cpp_namespace.empty() || y.path.ends_with(b->kernel_list_file)))
      y.cpp_namespace = b->kernel_namespace;
  KernelEntry* cur = nullptr;
  bool in_dispatch = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::string t = trim(l);
    if (t.empty() || t[0] == '#') continue;
    if (l.rfind("- func:", 0) == 0) {
      KernelEntry e;
      e.op = scalar(l.substr(7));
      e.line = static_cast<uint32_t>(i + 1);
      e.section = "func";
      split_op(e);
      y.entries.push_back(e);
      cur = &y.entries.back();
      in_dispatch = false;
      continue;
    }
    if (!cur) continue;
    if (t == "dispatch:") {
      in_dispatch = true;
      continue;
    }
    if (in_dispatch && indent_of(l) >= 4) {
      size_t colon = t.find(':');
      if (colon == std::string::npos) continue;
      std::string key = trim(t.substr(0, colon));
      std::string value = scalar(t.substr(colon + 1));
      std::stringstream keys(key);
      for (std::string k; std::getline(keys, k, ',');)
        if (trim(k) == "PrivateUse1") cur->kernel = value;
    } else if (indent_of(l) <= 2) {
      in_dispatch = false;
    }
  }
  // Only entries that name a kernel are called by name; a qualified one carries its namespace.
  std::vector<KernelEntry> kept;
  for (auto& e : y.entries) {
    if (e.kernel.empty()) continue;
    size_t q = e.kernel.rfind("::");
    e.scope = q == std::string::npos ? y.cpp_namespace : e.kernel.substr(0, q);
    if (q != std::string::npos) e.kernel = e.kernel.substr(q + 2);
    kept.push_back(e);
  }
  y.entries = std::move(kept);
}

// --- native_functions.yaml: the schema of each operator, as type keys -----------------------------

// "Tensor(a!)" -> "Tensor", "int[2]" -> "int[]", "Tensor?[]" -> "Tensor?[]", "SymInt[]?" -> "int[]?".
std::string schema_key(std::string t) {
  for (size_t p; (p = t.find('(')) != std::string::npos;) {
    size_t q = t.find(')', p);
    t.erase(p, q == std::string::npos ? std::string::npos : q - p + 1);
  }
  bool outer_opt = false, list = false;
  if (!t.empty() && t.back() == '?') {
    outer_opt = true;
    t.pop_back();
  }
  if (size_t b = t.find('['); b != std::string::npos) {
    list = true;
    t.resize(b);
  }
  bool inner_opt = !t.empty() && t.back() == '?';
  if (inner_opt) t.pop_back();
  if (t == "SymInt") t = "int";
  return t + (inner_opt ? "?" : "") + (list ? "[]" : "") + (outer_opt ? "?" : "");
}

std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

// op name ("add.Tensor") -> its schema, from the `- func:` lines, for the ops `wanted` lists.
std::map<std::string, OpSchema> schemas_in(const std::string& path, const std::set<std::string>& wanted) {
  std::map<std::string, OpSchema> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("- func:", 0) != 0) continue;
    std::string f = trim(line.substr(7));
    size_t open = f.find('('), close = f.rfind(") ->");
    if (open == std::string::npos || !wanted.count(f.substr(0, open))) continue;
    if (close == std::string::npos) close = f.rfind(')');
    OpSchema s;
    bool kw_only = false;
    for (const auto& a : split_top(f.substr(open + 1, close - open - 1))) {
      if (a == "*") {
        kw_only = true;
        continue;
      }
      std::string type = a.substr(0, a.find(' '));
      if (kw_only && type.find('!') != std::string::npos) s.out = true;
      s.args.push_back(schema_key(type));
    }
    out[f.substr(0, open)] = std::move(s);
  }
  return out;
}

std::string strip_namespaces(std::string t) {
  for (const char* ns : {"at::", "c10::", "std::", "__cxx11::"})
    for (size_t p; (p = t.find(ns)) != std::string::npos;) t.erase(p, std::string(ns).size());
  return t;
}

// A demangled parameter type ("c10::optional<at::Tensor> const&") as a schema key ("Tensor?").
std::string cxx_key(std::string t) {
  t = strip_namespaces(t);
  std::string c;
  for (char ch : t)
    if (ch != '&' && ch != ' ') c += ch;
  for (size_t p; (p = c.find("const")) != std::string::npos;) c.erase(p, 5);
  auto inner = [&](const std::string& prefix) { return c.substr(prefix.size(), c.size() - prefix.size() - 1); };
  auto starts = [&](const std::string& prefix) { return c.rfind(prefix, 0) == 0 && c.back() == '>'; };
  if (starts("optional<")) return cxx_key(inner("optional<")) + "?";
  if (starts("OptionalArrayRef<")) return cxx_key(inner("OptionalArrayRef<")) + "[]?";
  for (const char* l : {"ArrayRef<", "List<", "vector<", "IListRef<"})
    if (starts(l)) return cxx_key(inner(l)) + "[]";
  if (starts("array<")) return cxx_key(inner("array<").substr(0, inner("array<").find(','))) + "[]";
  if (c == "IntArrayRef" || c == "SymIntArrayRef") return "int[]";
  if (c == "OptionalIntArrayRef" || c == "OptionalSymIntArrayRef") return "int[]?";
  if (c == "TensorList" || c == "ITensorListRef") return "Tensor[]";
  if (c == "long" || c == "int64_t" || c == "SymInt") return "int";
  if (c == "double") return "float";
  if (c == "basic_string_view<char>" || c == "string_view") return "str";
  return c;
}

// torchgen's C++ name of an entry: the base name, "_out" for an out= overload, "_symint" for one
// listed under `symint` (its SymInt signature).
std::string cpp_name(const KernelEntry& e, const std::map<std::string, OpSchema>& schemas) {
  if (!e.kernel.empty()) return e.kernel;
  std::string name = e.base;
  auto it = schemas.find(e.op);
  bool out = it != schemas.end() ? it->second.out
                                 : (e.overload == "out" || (e.overload.size() > 4 && e.overload.ends_with("_out")));
  if (out) name += "_out";
  if (e.section == "symint") name += "_symint";
  return name;
}

std::optional<GeneratedDeclaration> generated_declaration(const BackendYaml& y, const demangle::SymbolName& sym) {
  if (y.output_dir.empty()) return std::nullopt;
  std::string header = y.output_dir + "/" + y.class_name + ".h";
  auto text = read_text(header);
  if (!text) return std::nullopt;
  std::vector<std::string> want;
  for (const auto& p : sym.params) want.push_back(source::normalize_type(p, false));
  if (want.size() == 1 && want[0] == "void") want.clear();
  std::istringstream in(*text);
  uint32_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(" " + sym.name + "(") == std::string::npos) continue;
    auto raw = source::raw_declaration(line, 1, sym.name, backend::api_macros());
    if (!raw) continue;
    std::vector<std::string> got;
    for (const auto& p : raw->params) got.push_back(source::normalize_type(p, true));
    if (got != want) continue;
    std::string decl = trim(line);
    if (!decl.empty() && decl.back() == ';') decl.pop_back();
    std::string ret = raw->return_type;
    if (ret.rfind("static ", 0) == 0) ret = ret.substr(7);
    return GeneratedDeclaration{header, n, decl, ret, raw->params};
  }
  return std::nullopt;
}

}  // namespace

Result<BackendYaml> read_backend_yaml(const std::string& path) {
  auto text = read_text(path);
  if (!text) return InputError{path, "cannot read the backend yaml"};
  BackendYaml y;
  std::error_code ec;
  y.path = fs::absolute(path, ec).lexically_normal().string();
  std::vector<std::string> lines;
  std::istringstream in(*text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  if (std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("- func:", 0) == 0; })) {
    read_func_list(lines, y);
    return y;
  }
  std::string section;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::string t = trim(l);
    if (t.empty() || t[0] == '#') continue;
    if (indent_of(l) == 0 && t[0] != '-') {
      size_t colon = t.find(':');
      if (colon == std::string::npos) continue;
      std::string key = t.substr(0, colon), value = scalar(t.substr(colon + 1));
      section.clear();
      if (key == "backend") y.backend = value;
      else if (key == "cpp_namespace") y.cpp_namespace = value;
      else if (key == "class_name") y.class_name = value;
      else if (key == "supported" || key == "autograd" || key == "symint" || key == "full_codegen") section = key;
      continue;
    }
    if (!section.empty() && t[0] == '-') {
      KernelEntry e;
      e.op = scalar(t.substr(1));
      e.line = static_cast<uint32_t>(i + 1);
      e.section = section;
      split_op(e);
      if (!e.base.empty()) y.entries.push_back(e);
    }
  }
  if (y.backend.empty() || y.cpp_namespace.empty())
    return InputError{path, "not a torchgen backend yaml: it needs `backend:` and `cpp_namespace:`"};
  if (y.class_name.empty()) y.class_name = y.backend + "NativeFunctions";
  for (auto& e : y.entries) e.scope = y.cpp_namespace + "::" + y.class_name;
  // An op under `symint` is also under `supported`: the generated code calls its _symint name only.
  std::vector<KernelEntry> kept;
  for (const auto& e : y.entries) {
    bool symint = e.section != "symint" && std::any_of(y.entries.begin(), y.entries.end(), [&](const KernelEntry& s) {
                    return s.section == "symint" && s.op == e.op;
                  });
    if (!symint) kept.push_back(e);
  }
  y.entries = std::move(kept);
  return y;
}

void read_schemas(BackendYaml& y) {
  if (y.native_yaml.empty()) return;
  std::set<std::string> wanted;
  for (const auto& e : y.entries) wanted.insert(e.op);
  y.schemas = schemas_in(y.native_yaml, wanted);
}

namespace {

// The yaml, output directory and torchgen of a command line that runs gen_backend_stubs.
std::optional<FoundYaml> from_command(const std::string& line, const std::string& cwd) {
  if (line.find("gen_backend_stubs") == std::string::npos) return std::nullopt;
  std::istringstream in(line);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) {
    if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front())
      t = t.substr(1, t.size() - 2);
    tokens.push_back(t);
  }
  FoundYaml f;
  std::string script;
  auto abs = [&](const std::string& p) {
    return fs::path(p).is_absolute() ? p : (fs::path(cwd) / p).lexically_normal().string();
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    auto value = [&](const char* opt) -> std::optional<std::string> {
      std::string o = opt;
      if (t == o && i + 1 < tokens.size()) return tokens[i + 1];
      if (t.rfind(o + "=", 0) == 0) return t.substr(o.size() + 1);
      return std::nullopt;
    };
    for (const char* o : {"-s", "--source_yaml", "--source-yaml"})
      if (auto v = value(o)) f.yaml = abs(*v);
    for (const char* o : {"-o", "--output_dir", "--output-dir"})
      if (auto v = value(o)) f.output_dir = abs(*v);
    if (t.ends_with("gen_backend_stubs.py")) script = abs(t);
  }
  if (f.yaml.empty()) return std::nullopt;
  if (!script.empty()) {
    fs::path torchgen = fs::path(script).parent_path();
    for (fs::path p : {torchgen.parent_path() / "aten/src/ATen/native/native_functions.yaml",
                       torchgen / "packaged/ATen/native/native_functions.yaml"}) {
      std::error_code ec;
      if (fs::exists(p, ec)) {
        f.native_yaml = p.string();
        break;
      }
    }
  }
  return f;
}

}  // namespace

// The build's include directories (-I, -isystem): compile_commands.json, else the Makefiles' flags.make.
std::vector<std::string> include_dirs(const build::Model& build) {
  std::vector<std::string> dirs;
  auto take = [&](const std::vector<std::string>& argv, const std::string& cwd) {
    for (size_t i = 0; i < argv.size(); ++i) {
      std::string d;
      if ((argv[i] == "-I" || argv[i] == "-isystem") && i + 1 < argv.size()) d = argv[i + 1];
      else if (argv[i].rfind("-I", 0) == 0 && argv[i].size() > 2) d = argv[i].substr(2);
      if (d.empty()) continue;
      dirs.push_back(build::normalize_path(fs::path(d).is_absolute() ? d : cwd + "/" + d));
    }
  };
  // (held here: a range-for over a member of the returned pointer would outlive an unkept database)
  const auto database = build::read_compile_database(build.build_dir);
  for (const auto& c : database->commands) take(c.argv, c.directory);
  if (!dirs.empty() || build.build_dir.empty()) return dirs;
  // Without a compile database: build.ninja's `INCLUDES = ` and the Makefiles' `CXX_INCLUDES = `.
  auto read_flags = [&](const std::string& path, const std::string& key) {
    std::istringstream in(read_text(path).value_or(""));
    for (std::string line; std::getline(in, line);) {
      size_t at = line.find(key);
      if (at == std::string::npos || line.find_first_not_of(' ') != at) continue;
      std::istringstream words(line.substr(at + key.size()));
      std::vector<std::string> argv;
      for (std::string w; words >> w;) argv.push_back(w);
      take(argv, build.build_dir);
    }
  };
  read_flags(build.build_dir + "/build.ninja", "INCLUDES = ");
  walk_tree(build.build_dir,
            [&](const std::string& path, const struct stat&) {
              if (!path.ends_with("/flags.make")) return;
              std::istringstream in(read_text(path).value_or(""));
              for (std::string line; std::getline(in, line);) {
                if (line.rfind("CXX_INCLUDES = ", 0) != 0) continue;
                std::istringstream words(line.substr(15));
                std::vector<std::string> argv;
                for (std::string w; words >> w;) argv.push_back(w);
                take(argv, build.build_dir);
              }
            },
            {.skip_hidden = true, .follow_symlinks = false});
  return dirs;
}

namespace {

// Where gen_backend_stubs wrote <class_name>.h: the output directory its command names, else a directory
// the build's compiles include, else anywhere in the source tree (torch_npu generates it there, outside
// the build). The first that holds it; the command's own directory when none does yet.
void locate_generated_header(FoundYaml& f, const build::Model& build, const std::vector<std::string>& includes) {
  auto y = read_backend_yaml(f.yaml);
  if (!y) return;
  const std::string name = y->class_name + ".h";
  std::error_code ec;
  if (!f.output_dir.empty() && fs::exists(f.output_dir + "/" + name, ec)) return;
  for (const auto& dir : includes)
    if (fs::exists(dir + "/" + name, ec)) {
      f.output_dir = dir;
      return;
    }
  if (build.source_dir.empty()) return;
  std::string found;
  walk_tree(build.source_dir,
            [&](const std::string& path, const struct stat&) {
              if (found.empty() && path.ends_with("/" + name)) found = path.substr(0, path.size() - name.size() - 1);
            },
            {.skip_hidden = true, .follow_symlinks = false, .max_depth = 64, .max_files = 200000});
  if (!found.empty()) f.output_dir = found;
}

}  // namespace

std::vector<FoundYaml> find_backend_yamls(const build::Model& build) {
  std::vector<FoundYaml> out;
  auto add = [&](FoundYaml f) {
    for (const auto& o : out)
      if (o.yaml == f.yaml) return;
    out.push_back(std::move(f));
  };
  auto scan = [&](const std::string& file, const std::string& cwd) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
      if (auto f = from_command(line, cwd)) add(*f);
  };
  if (!build.build_dir.empty()) {
    std::error_code ec;
    if (fs::exists(build.build_dir + "/build.ninja", ec)) scan(build.build_dir + "/build.ninja", build.build_dir);
    // Makefiles: each target's build.make runs its custom commands from the target's binary dir.
    walk_tree(build.build_dir,
              [&](const std::string& path, const struct stat&) {
                if (!path.ends_with("/build.make")) return;
                std::ifstream in(path);
                std::string cwd = build.build_dir;
                for (std::string line; std::getline(in, line);) {
                  if (size_t cd = line.find("cd "); cd != std::string::npos && line.find("&&") != std::string::npos) {
                    std::string rest = line.substr(cd + 3);
                    cwd = trim(rest.substr(0, rest.find("&&")));
                  }
                  if (auto f = from_command(line, cwd)) add(*f);
                }
              },
              {.skip_hidden = true, .follow_symlinks = false});
  }
  if (out.empty() && !build.source_dir.empty()) {
    walk_tree(build.source_dir,
              [&](const std::string& path, const struct stat&) {
                std::string name = fs::path(path).filename().string();
                if (!name.ends_with(".yaml") || name == "native_functions.yaml") return;
                if (name.find("native_functions") == std::string::npos && !is_kernel_list(name)) return;
                if (!build.build_dir.empty() && path.rfind(build.build_dir + "/", 0) == 0) return;
                add({path, "", ""});
              },
              {.skip_hidden = true, .follow_symlinks = false});
  }
  if (!out.empty()) {
    const auto includes = include_dirs(build);
    for (auto& f : out) locate_generated_header(f, build, includes);
  }
  return out;
}

KernelMatch match_kernel(const std::vector<BackendYaml>& yamls, const demangle::SymbolName& sym) {
  KernelMatch m;
  if (sym.scopes.empty() || sym.name.empty()) return m;
  std::string scope;
  for (const auto& s : sym.scopes) scope += (scope.empty() ? "" : "::") + s;
  // A structured kernel's dispatch name is its class: at::musa::structured_<kernel>::impl (torch_musa's
  // LegacyMeta and Customized strategies; `meta` too for Customized).
  std::string structured;
  if ((sym.name == "impl" || sym.name == "meta") && sym.scopes.size() > 1 &&
      sym.scopes.back().rfind("structured_", 0) == 0) {
    structured = sym.scopes.back().substr(11);
    scope = scope.substr(0, scope.size() - sym.scopes.back().size() - 2);
  }
  for (const auto& y : yamls) {
    const auto& schemas = y.schemas;
    std::vector<const KernelEntry*> named;
    for (const auto& e : y.entries)
      if (e.scope == scope && (structured.empty() ? cpp_name(e, schemas) == sym.name : e.kernel == structured))
        named.push_back(&e);
    if (named.empty()) continue;
    // Overloads share the name: the schema's parameters decide (arity, then each type).
    std::vector<std::string> keys;
    for (const auto& p : sym.params) keys.push_back(cxx_key(p));
    if (keys.size() == 1 && keys[0] == "void") keys.clear();
    std::vector<const KernelEntry*> exact, unknown, other;
    for (const auto* e : named) {
      auto it = schemas.find(e->op);
      if (it == schemas.end()) unknown.push_back(e);
      else if (it->second.args == keys) exact.push_back(e);
      else other.push_back(e);
    }
    m.yaml = &y;
    m.entries = exact;
    if (m.entries.empty()) m.entries = unknown;
    if (m.entries.empty() && named.size() == 1) m.entries = named;
    if (m.entries.empty()) m.entries = other;
    m.declaration = generated_declaration(y, sym);
    return m;
  }
  return m;
}

}  // namespace mlc::codegen
