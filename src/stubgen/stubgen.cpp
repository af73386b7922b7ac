// Plans stubs and CMake patches. Signatures come, in order, from the SDK header's declaration, the
// CUDA counterpart's declaration mapped to MUSA names, the demangled name, and last an assembler
// label that binds the mangled name whatever the signature. Files are merged: generated stubs live
// between markers, each with a hash of its body so an edited stub is recognised and kept.
#include "stubgen/stubgen.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cmake/build_info.h"
#include "cmake/cmake_lang.h"
#include "common/file_io.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "dwarf/references.h"
#include "porting/porting_map.h"
#include "source/scanner.h"
#include "stubgen/diff.h"
#include "trace/stand_in.h"

namespace mlc::stubgen {
namespace {

namespace fs = std::filesystem;

constexpr char kCppBegin[] = "// musa-stubgen: begin generated stubs";
constexpr char kCppEnd[] = "// musa-stubgen: end generated stubs";
constexpr char kHdrBegin[] = "// musa-stubgen: begin generated declarations";
constexpr char kHdrEnd[] = "// musa-stubgen: end generated declarations";
constexpr char kStubMark[] = "// musa-stubgen: stub ";
constexpr char kEndMark[] = "// musa-stubgen: end ";

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> identifiers(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (ident_char(text[i]) && !std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t s = i;
      while (i < text.size() && ident_char(text[i])) ++i;
      out.emplace_back(text.substr(s, i - s));
    } else {
      ++i;
    }
  }
  return out;
}

bool is_builtin_word(const std::string& w) {
  static const std::set<std::string> words = {
      "void",     "bool",      "char",     "short",     "int",      "long",     "float",    "double",
      "unsigned", "signed",    "const",    "volatile",  "struct",   "enum",     "union",    "size_t",
      "ssize_t",  "ptrdiff_t", "int8_t",   "int16_t",   "int32_t",  "int64_t",  "uint8_t",  "uint16_t",
      "uint32_t", "uint64_t",  "intptr_t", "uintptr_t", "__host__", "__device__", "wchar_t", "restrict",
      "__restrict__"};
  return words.count(w) > 0;
}

// ---------------------------------------------------------------------------------------------
// Signatures

struct Signature {
  std::string source;  // sdk-header | cuda-header | demangled | asm-label
  std::string return_type = "void";
  std::string name;                      // C name, unqualified C++ name, or the asm-label function's name
  std::vector<std::string> params;
  std::vector<std::string> param_names;
  std::string trailing;
  bool c_linkage = false;
  std::vector<std::string> scopes;       // namespaces of a C++ stub
  std::vector<std::string> forward;      // forward declarations the C++ stub needs
  std::set<std::string> includes;        // SDK headers (relative to include/)
  std::string asm_label;                 // set for asm-label stubs
  std::string origin;                    // "declared in musa_runtime_api.h:15"
  bool declare_in_header = false;
  std::string display;                   // the name the stub's message gives, when not the default
};

std::string relative_include(const std::string& header, const std::string& home) {
  std::string inc = home + "/include/";
  return header.rfind(inc, 0) == 0 ? header.substr(inc.size()) : header.substr(header.rfind('/') + 1);
}

struct FoundDeclaration {
  source::RawDeclaration raw;
  std::string file;
  uint32_t line = 0;
};

// Every declaration of `name` in the index, the likeliest stub model first: C linkage, host-side
// (CUDA also declares device-side variants), non-template, a declaration rather than an inline body.
std::vector<FoundDeclaration> declarations_in(const source::SourceIndex& index, const std::string& name) {
  std::vector<std::pair<int, FoundDeclaration>> ranked;
  for (const auto* e : index.lookup(name)) {
    if (e->kind != source::EntityKind::FunctionDeclaration && e->kind != source::EntityKind::FunctionDefinition) continue;
    const std::string& path = index.file_of(*e).path;
    auto text = read_text(path);
    if (!text) continue;
    auto raw = source::raw_declaration(*text, e->line, name);
    if (!raw) continue;
    bool device_only = raw->return_type.find("__device__") != std::string::npos &&
                       raw->return_type.find("__host__") == std::string::npos;
    int score = (raw->extern_c ? 8 : 0) + (device_only ? 0 : 4) + (e->is_template ? 0 : 2) +
                (e->kind == source::EntityKind::FunctionDeclaration ? 1 : 0);
    ranked.push_back({score, {*raw, path, e->line}});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<FoundDeclaration> out;
  for (auto& r : ranked) out.push_back(std::move(r.second));
  return out;
}

class Planner {
 public:
  Planner(const trace::TraceContext& ctx, const StubOptions& o) : ctx_(ctx), o_(o) {}

  // SDK header: the exact declaration.
  std::optional<Signature> from_sdk_header(const demangle::SymbolName& sym) {
    if (!ctx_.sdk() || sym.kind != demangle::NameKind::CName) return std::nullopt;
    auto found = declarations_in(ctx_.sdk()->headers, sym.name);
    if (found.empty()) return std::nullopt;
    const auto& d = found.front();
    Signature s = from_raw(d.raw, "sdk-header");
    s.includes.insert(relative_include(d.file, ctx_.sdk()->home));
    s.origin = "declared in " + relative_include(d.file, ctx_.sdk()->home) + ":" + std::to_string(d.line);
    return s;
  }

  // CUDA counterpart: its declaration with CUDA names mapped to MUSA names; only when every type
  // it names is known to the SDK's headers (or is a builtin).
  std::optional<Signature> from_cuda_header(const demangle::SymbolName& sym) {
    if (!ctx_.cuda() || !ctx_.mapping || sym.kind != demangle::NameKind::CName) return std::nullopt;
    std::string cuda_name = porting::to_cuda_name(sym.name, *ctx_.mapping);
    if (cuda_name == sym.name) return std::nullopt;
    const auto& to_musa = ctx_.mapping->to_musa;
    for (auto d : declarations_in(ctx_.cuda()->headers, cuda_name)) {
      d.raw.return_type = porting::map_identifiers(d.raw.return_type, to_musa);
      for (auto& p : d.raw.params) p = porting::map_identifiers(p, to_musa);
      d.raw.name = sym.name;
      Signature s = from_raw(d.raw, "cuda-header");
      std::set<std::string> names(d.raw.param_names.begin(), d.raw.param_names.end());
      std::string all = d.raw.return_type;
      for (const auto& p : d.raw.params) all += " " + p;
      bool known = true;
      for (const auto& id : identifiers(all)) {
        if (is_builtin_word(id) || names.count(id)) continue;
        auto header = header_declaring_type(id);
        if (!header) {  // e.g. musaHostFn_t: MUSA's headers do not have it
          known = false;
          break;
        }
        s.includes.insert(*header);
      }
      if (!known) continue;
      s.origin = "CUDA's " + cuda_name + " (" + d.file.substr(d.file.rfind('/') + 1) + ":" + std::to_string(d.line) +
                 "), names mapped to MUSA";
      s.declare_in_header = true;
      return s;
    }
    return std::nullopt;
  }

  std::optional<std::string> header_declaring_type(const std::string& id) {
    if (!ctx_.sdk()) return std::nullopt;
    for (const auto* e : ctx_.sdk()->headers.lookup(id)) {
      if (e->kind == source::EntityKind::Alias || e->kind == source::EntityKind::ClassDefinition) {
        return relative_include(ctx_.sdk()->headers.file_of(*e).path, ctx_.sdk()->home);
      }
    }
    return std::nullopt;
  }

  // A namespaced stand-in for a C API the SDK lacks (torch_musa's c10::musa::musaMallocAsync): the
  // parameter types are the mangled name's, which the caller's reference fixes; the spelling of
  // each (typedefs such as musaStream_t) and its name come from the SDK's or CUDA's declaration of
  // the C function, where that parameter resolves to the same type through the SDK's typedefs.
  std::optional<Signature> from_stand_in(const demangle::SymbolName& sym) {
    if (!ctx_.mapping) return std::nullopt;
    std::string cuda_name = trace::stand_in_cuda_name(sym, *ctx_.mapping);
    if (cuda_name.empty()) return std::nullopt;
    std::vector<std::string> want;
    for (const auto& p : sym.params) want.push_back(source::normalize_type(p, true));
    if (want.size() == 1 && want[0] == "void") want.clear();
    struct Model {
      FoundDeclaration d;
      std::string from;
    };
    std::vector<Model> models;
    if (ctx_.sdk())
      for (auto& d : declarations_in(ctx_.sdk()->headers, sym.name)) models.push_back({std::move(d), "the SDK's"});
    if (ctx_.cuda()) {
      for (auto d : declarations_in(ctx_.cuda()->headers, cuda_name)) {
        d.raw.return_type = porting::map_identifiers(d.raw.return_type, ctx_.mapping->to_musa);
        for (auto& p : d.raw.params) p = porting::map_identifiers(p, ctx_.mapping->to_musa);
        models.push_back({std::move(d), "CUDA's " + cuda_name + ","});
      }
    }
    // The model whose parameters agree with the most of the mangled ones (the SDK's first on ties).
    const Model* best = nullptr;
    size_t best_agree = 0;
    for (const auto& m : models) {
      size_t agree = 0;
      for (size_t k = 0; k < want.size() && k < m.d.raw.params.size(); ++k) agree += resolved_type(m.d.raw.params[k]) == want[k];
      if (m.d.raw.params.size() == want.size()) agree += want.size() + 1;  // the same arity first
      if (!best || agree > best_agree) {
        best = &m;
        best_agree = agree;
      }
    }
    if (!best) return std::nullopt;
    Signature s;
    s.source = best->from == "the SDK's" ? "sdk-header" : "cuda-header";
    s.name = sym.name;
    s.scopes = sym.scopes;
    s.display = sym.name;  // torch_musa's message: "musaMallocAsync is not supported now!"
    s.declare_in_header = true;
    s.return_type = best->d.raw.return_type.empty() ? "void" : best->d.raw.return_type;
    std::set<std::string> names;
    for (size_t k = 0; k < want.size(); ++k) {
      const auto& raw = best->d.raw;
      if (k < raw.params.size() && resolved_type(raw.params[k]) == want[k]) {
        s.params.push_back(raw.params[k]);
        s.param_names.push_back(k < raw.param_names.size() ? raw.param_names[k] : "");
        names.insert(s.param_names.back());
      } else {
        s.params.push_back(sym.params[k]);  // the caller's exact type, spelled as c++filt does
        s.param_names.push_back("");
      }
    }
    std::set<std::string> forward;
    auto needs = [&](const std::string& text, bool is_return) {
      for (const auto& id : identifiers(text)) {
        if (is_builtin_word(id) || names.count(id)) continue;
        if (auto header = header_declaring_type(id)) {
          s.includes.insert(*header);
        } else if (is_return) {
          return false;
        } else {
          forward.insert("struct " + id + ";");  // a class the SDK's headers only name in a typedef
        }
      }
      return true;
    };
    if (!needs(s.return_type, true)) s.return_type = "void";  // not in the mangled name; a stub never returns
    for (const auto& p : s.params) needs(p, false);
    s.forward.assign(forward.begin(), forward.end());
    s.origin = "stand-in for " + sym.name + ", which the SDK lacks: parameter types from the mangled name, spellings from " +
               best->from + " " + best->d.file.substr(best->d.file.rfind('/') + 1) + ":" + std::to_string(best->d.line);
    return s;
  }

  // A parameter as written, typedefs resolved through the SDK's headers, normalized as a mangled
  // parameter type is: "musaStream_t hStream" -> "MUstream_st*".
  std::string resolved_type(const std::string& written) const {
    std::string t = source::normalize_type(written, true);
    if (!ctx_.sdk()) return t;
    for (int round = 0; round < 4; ++round) {  // typedefs of typedefs, a few levels deep
      std::string out;
      bool changed = false;
      for (size_t i = 0; i < t.size();) {
        if (ident_char(t[i]) && !std::isdigit(static_cast<unsigned char>(t[i]))) {
          size_t b = i;
          while (i < t.size() && ident_char(t[i])) ++i;
          std::string id = t.substr(b, i - b);
          std::string target = is_builtin_word(id) ? "" : ctx_.sdk()->headers.alias(id);
          changed |= !target.empty() && target != id;
          out += target.empty() ? id : target;
        } else {
          out += t[i++];
        }
      }
      if (!changed) break;
      t = source::normalize_type(out, false);
    }
    return t;
  }

  // The demangled name: a free function in namespaces whose parameter types are builtins or
  // (forward-declarable) class types. Its return type is not in the mangled name unless it is a
  // template; a stub never returns normally, so void is safe for the caller.
  std::optional<Signature> from_demangled(const demangle::SymbolName& sym) {
    if (sym.kind != demangle::NameKind::Function || sym.is_constructor || sym.is_destructor ||
        !sym.template_args.empty() || !sym.method_qualifiers.empty() || sym.name.rfind("operator", 0) == 0 ||
        sym.scopes.empty()) {
      return std::nullopt;
    }
    for (const auto& scope : sym.scopes) {
      if (scope.find_first_of("<({ ") != std::string::npos || !is_namespace(sym, scope)) return std::nullopt;
    }
    Signature s;
    s.source = "demangled";
    s.name = sym.name;
    s.scopes = sym.scopes;
    std::set<std::string> forward;
    for (size_t k = 0; k < sym.params.size(); ++k) {
      const std::string& p = sym.params[k];
      if (p.find_first_of("<(") != std::string::npos || p.rfind("std::", 0) == 0) return std::nullopt;
      // "at::TensorIteratorBase const&": the class needs a forward declaration in its namespace.
      std::string base = p;
      for (const char* q : {" const", " volatile", "&&", "&", "*"}) {
        for (size_t pos = base.find(q); pos != std::string::npos; pos = base.find(q)) base.erase(pos, std::strlen(q));
      }
      while (!base.empty() && base.back() == ' ') base.pop_back();
      if (!is_builtin_type(base)) {
        auto colon = base.rfind("::");
        if (colon == std::string::npos) return std::nullopt;
        std::string ns = base.substr(0, colon), cls = base.substr(colon + 2);
        std::string decl = "namespace " + ns + " {\nclass " + cls + ";\n}  // namespace " + ns;
        forward.insert(decl);
      }
      s.params.push_back(p);
      s.param_names.push_back("");
    }
    s.forward.assign(forward.begin(), forward.end());
    s.origin = "signature from the mangled name";
    return s;
  }

  static bool is_builtin_type(const std::string& t) {
    std::istringstream words(t);
    std::string w;
    bool any = false;
    while (words >> w) {
      if (!is_builtin_word(w)) return false;
      any = true;
    }
    return any;
  }

  bool is_namespace(const demangle::SymbolName& sym, const std::string& scope) const {
    if (!ctx_.sources) return std::islower(static_cast<unsigned char>(scope[0])) != 0;
    // A class of that qualified name in the sources makes it a method, not a namespace member.
    std::string qualified;
    for (const auto& s : sym.scopes) {
      qualified += (qualified.empty() ? "" : "::") + s;
      if (s == scope) break;
    }
    for (const auto* e : ctx_.sources->lookup(scope)) {
      if (e->kind == source::EntityKind::ClassDefinition && e->qualified == qualified) return false;
    }
    return true;
  }

  Signature asm_label(const UnresolvedSymbol& u) {
    Signature s;
    s.source = "asm-label";
    s.name = "musa_stub_" + hex64(fnv1a(u.symbol)).substr(0, 12);
    s.asm_label = u.symbol;
    s.c_linkage = true;
    s.origin = "signature unknown: bound by its assembler name, which links whatever the signature";
    return s;
  }

  static Signature from_raw(const source::RawDeclaration& raw, const std::string& source) {
    Signature s;
    s.source = source;
    s.return_type = raw.return_type.empty() ? "void" : raw.return_type;
    s.name = raw.name;
    s.params = raw.params;
    s.param_names = raw.param_names;
    s.trailing = raw.trailing;
    s.c_linkage = true;
    return s;
  }

  // The "not supported" value of the SDK's error enum (musaError_t -> musaErrorNotSupported), when
  // an SDK header defines it.
  std::optional<std::string> error_value(const Signature& s) {
    std::string rt = s.return_type;
    auto pos = rt.find("Error_t");
    if (pos == std::string::npos) return std::nullopt;
    size_t start = pos;
    while (start > 0 && ident_char(rt[start - 1])) --start;
    std::string value = rt.substr(start, pos - start) + "ErrorNotSupported";
    if (!ctx_.sdk()) return std::nullopt;
    for (const auto& f : ctx_.sdk()->headers.files()) {
      auto text = read_text(f.path);
      if (!text) continue;
      for (size_t p = text->find(value); p != std::string::npos; p = text->find(value, p + 1)) {
        bool start_ok = p == 0 || !ident_char((*text)[p - 1]);
        bool end_ok = p + value.size() >= text->size() || !ident_char((*text)[p + value.size()]);
        if (start_ok && end_ok) return value;
      }
    }
    return std::nullopt;
  }

  bool c10_available() const {
    if (o_.c10) return *o_.c10;
    if (!ctx_.sources) return false;
    for (const auto& f : ctx_.sources->files()) {
      const std::string& p = f.path;
      if (p.size() > 22 && p.compare(p.size() - 22, 22, "c10/util/Exception.h") == 0) return true;
    }
    return false;
  }

  const trace::TraceContext& ctx_;
  const StubOptions& o_;
};

std::string signature_text(const Signature& s) {
  std::string head;
  if (!s.asm_label.empty()) return "void " + s.name + "()";
  head = s.return_type + " " + s.name + "(";
  std::string params;
  for (size_t k = 0; k < s.params.size(); ++k) params += (k ? ", " : "") + s.params[k];
  std::string line = head + params + ")" + s.trailing;
  if (line.size() <= 110) return line;
  // clang-format's bin-packing would align continuation lines under the first parameter.
  std::string out = head;
  std::string indent(head.size(), ' ');
  size_t col = head.size();
  for (size_t k = 0; k < s.params.size(); ++k) {
    std::string piece = s.params[k] + (k + 1 < s.params.size() ? "," : ")" + s.trailing);
    if (k > 0 && col + 1 + piece.size() > 110) {
      out += "\n" + indent;
      col = indent.size();
    } else if (k > 0) {
      out += " ";
      ++col;
    }
    out += piece;
    col += piece.size();
  }
  return out;
}

// A C++ stub's declaration in its own namespaces, as torch_musa's unimplemented_functions.h has it.
std::string namespaced_declaration(const Signature& s) {
  std::string out;
  for (const auto& f : s.forward) out += f + "\n";
  for (const auto& ns : s.scopes) out += "namespace " + ns + " {\n";
  out += signature_text(s) + ";\n";
  for (auto it = s.scopes.rbegin(); it != s.scopes.rend(); ++it) out += "}  // namespace " + *it + "\n";
  return out;
}

std::string cpp_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string stub_block(const UnresolvedSymbol& u, const Signature& s, const StubOptions& o, Planner& planner,
                       bool c10) {
  std::string display = s.asm_label.empty() ? (s.c_linkage ? s.name : demangle::parse_symbol(u.symbol).qualified())
                                            : demangle::parse_symbol(u.symbol).qualified();
  if (display.empty()) display = u.demangled;
  if (!s.display.empty()) display = s.display;
  std::string out = "// " + std::string(to_string(u.classification)) + ": " + s.origin + "\n";
  std::string open_ns, close_ns;
  for (const auto& f : s.forward) out += f + "\n";
  std::string sig = signature_text(s);
  if (!s.asm_label.empty()) {
    // Its own scope cannot be reproduced; the helper's name goes in --namespace, if one is given.
    if (!o.ns.empty()) {
      open_ns = "namespace " + o.ns + " {\n";
      close_ns = "}  // namespace " + o.ns + "\n";
    }
    out += "// " + u.demangled + "\n" + open_ns;
    out += "extern \"C\" void " + s.name + "() __asm__(" + cpp_string(s.asm_label) + ");\n";
    out += "extern \"C\" " + sig + " {\n";
  } else if (s.c_linkage) {
    out += "extern \"C\" " + sig + " {\n";
  } else {
    for (const auto& ns : s.scopes) open_ns += "namespace " + ns + " {\n";
    for (auto it = s.scopes.rbegin(); it != s.scopes.rend(); ++it) close_ns += "}  // namespace " + *it + "\n";
    out += open_ns + sig + " {\n";
  }
  for (const auto& n : s.param_names)
    if (!n.empty()) out += "  (void)" + n + ";\n";
  std::string names = cpp_string(u.demangled) + ", " + cpp_string(u.symbol);
  auto err = s.asm_label.empty() ? planner.error_value(s) : std::nullopt;
  bool is_void = s.return_type == "void" || !s.asm_label.empty();
  std::string ret = is_void ? "" : "  return " + (err ? *err : std::string("{}")) + ";\n";
  std::string message = cpp_string(display + " is not supported now!");
  std::string raise = c10 ? "    C10_THROW_ERROR(NotImplementedError, " + message + ");\n"
                          : "    throw std::runtime_error(" + message + ");\n";
  Style style = o.style;
  if (style == Style::ReturnError && !err) style = Style::Throw;  // only functions returning the error enum
  switch (style) {
    case Style::Abort: out += "  musa_stub_abort(" + names + ");\n"; break;
    case Style::ReturnError: out += "  musa_stub_enter(" + names + ");\n" + ret; break;
    case Style::Throw:
      out += "  if (musa_stub_enter(" + names + ") == MUSA_STUB_THROW) {\n" + raise + "  }\n" + ret;
      break;
  }
  out += "}\n" + close_ns;
  if (o.version_guard) {
    std::string guard = "#if defined(REAL_MUSA_VERSION) && (REAL_MUSA_VERSION < " + std::to_string(*o.version_guard) + ")\n";
    out = guard + out + "#endif\n";
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Merging into a file with a generated region

struct Region {
  bool found = false;
  size_t begin = 0, end = 0;  // [begin, end) covers the marker lines themselves
  std::map<std::string, std::string> blocks;  // key -> whole block text, markers included
  std::map<std::string, bool> edited;         // key -> body differs from its recorded hash
  std::map<std::string, std::string> uses;    // key -> the SDK headers it needs (recorded in its marker)
  std::string error;
};

Region parse_region(const std::string& text, const std::string& begin_marker, const std::string& end_marker) {
  Region r;
  size_t b = text.find(begin_marker);
  if (b == std::string::npos) return r;
  size_t e = text.find(end_marker, b);
  if (e == std::string::npos) {
    r.error = "the generated region opened by \"" + begin_marker + "\" is never closed";
    return r;
  }
  r.found = true;
  r.begin = b;
  size_t e_line_end = text.find('\n', e);
  r.end = e_line_end == std::string::npos ? text.size() : e_line_end + 1;
  size_t pos = b;
  while (true) {
    size_t s = text.find(kStubMark, pos);
    if (s == std::string::npos || s >= e) break;
    size_t line_end = text.find('\n', s);
    std::string header = text.substr(s + std::strlen(kStubMark), line_end - s - std::strlen(kStubMark));
    std::istringstream fields(header);
    std::string key, recorded, uses;
    fields >> key >> recorded >> uses;
    std::string end_line = std::string(kEndMark) + key + "\n";
    size_t close = text.find(end_line, line_end);
    if (close == std::string::npos || close > e) {
      r.error = "stub " + key + " has no end marker";
      return r;
    }
    std::string body = text.substr(line_end + 1, close - line_end - 1);
    r.blocks[key] = text.substr(s, close + end_line.size() - s);
    r.edited[key] = hex64(fnv1a(body)) != recorded;
    r.uses[key] = uses;
    pos = close + end_line.size();
  }
  return r;
}

// The marker records the body's hash (to recognise edits) and the SDK headers the stub needs.
std::string wrap_block(const std::string& key, const std::string& body, const std::string& uses) {
  return std::string(kStubMark) + key + " " + hex64(fnv1a(body)) + (uses.empty() ? "" : " " + uses) + "\n" + body +
         kEndMark + key + "\n";
}

struct Block {
  std::string body;
  std::string uses;  // comma-separated SDK headers
};

struct MergeResult {
  std::string text;
  std::vector<std::string> warnings;
  std::optional<std::string> error;
  std::set<std::string> uses;  // the SDK headers the final set of stubs needs
};

// `wanted`: key -> body for the stubs this run needs. Existing blocks not wanted are kept unless
// pruned; edited blocks are always kept.
MergeResult merge(const std::optional<std::string>& existing, const std::string& fresh_preamble,
                  const std::string& region_preamble, const std::map<std::string, Block>& wanted,
                  const std::string& begin_marker, const std::string& end_marker, bool prune, const std::string& path) {
  MergeResult m;
  Region r = existing ? parse_region(*existing, begin_marker, end_marker) : Region{};
  if (!r.error.empty()) {
    m.error = r.error;
    return m;
  }
  std::map<std::string, std::string> blocks;
  auto note_uses = [&](const std::string& uses) {
    std::istringstream in(uses);
    for (std::string h; std::getline(in, h, ',');)
      if (!h.empty()) m.uses.insert(h);
  };
  for (const auto& [key, block] : wanted) {
    if (r.blocks.count(key) && r.edited[key]) {
      blocks[key] = r.blocks[key];
      note_uses(r.uses[key]);
      m.warnings.push_back(path + ": kept the hand-edited stub " + key);
    } else {
      blocks[key] = wrap_block(key, block.body, block.uses);
      note_uses(block.uses);
    }
  }
  for (const auto& [key, block] : r.blocks) {
    if (blocks.count(key)) continue;
    if (!prune || r.edited[key]) {
      blocks[key] = block;
      note_uses(r.uses[key]);
      if (prune) m.warnings.push_back(path + ": kept the hand-edited stub " + key + " although it is no longer needed");
    }
  }
  std::string region = std::string(begin_marker) + "\n" + region_preamble;
  for (const auto& [key, block] : blocks) region += "\n" + block;
  region += "\n" + std::string(end_marker) + "\n";
  if (!existing) {
    m.text = fresh_preamble + region;
  } else if (!r.found) {
    m.text = *existing + (existing->empty() || existing->back() == '\n' ? "" : "\n") + "\n" + region;
  } else {
    m.text = existing->substr(0, r.begin) + region + existing->substr(r.end);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// CMake patches

struct Insertion {
  size_t offset;
  std::string text;
  size_t erase = 0;  // bytes replaced from offset (0: a pure insertion)
};

std::string line_indent(const std::string& text, size_t offset, bool* first_on_line) {
  size_t ls = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  ls = ls == std::string::npos ? 0 : ls + 1;
  size_t k = ls;
  while (k < offset && (text[k] == ' ' || text[k] == '\t')) ++k;
  *first_on_line = k == offset;
  return text.substr(ls, k - ls);
}

size_t common_prefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::string lower(std::string x) {
  std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) { return std::tolower(c); });
  return x;
}

// Where `entry` goes in `list`, in the list's own style: quoted when its neighbour is, on a line of its
// own with the neighbour's indentation (or beside it when entries share a line). A sorted list stays
// sorted; otherwise the entry goes next to the one sharing the longest prefix with it, in alphabetical
// order with that neighbour. References (${SRCS}) and generator expressions are never neighbours.
std::optional<Insertion> insertion_for(const std::string& text, const cmake::SourceList& list, const std::string& entry) {
  std::vector<const cmake::ListEntry*> direct;
  for (const auto& e : list.entries)
    if (!cmake::is_indirect_entry(e.raw)) direct.push_back(&e);
  if (direct.empty()) {
    // add_library(T SHARED ${SRCS}) or an empty set(): after the last argument, on its line.
    size_t at = list.entries.empty() ? list.close_paren : list.entries.back().end;
    return Insertion{at, " " + entry};
  }
  bool sorted = std::is_sorted(direct.begin(), direct.end(),
                               [](const auto* a, const auto* b) { return lower(a->raw) < lower(b->raw); });
  const cmake::ListEntry* after = nullptr;   // the entry the new one follows
  const cmake::ListEntry* before = nullptr;  // or, when none, the one it precedes
  if (sorted && direct.size() > 1) {
    for (const auto* e : direct) {
      if (lower(e->raw) < lower(entry)) after = e;
      else if (!before) before = e;
    }
  } else {
    size_t best_len = 0;
    for (const auto* e : direct) best_len = std::max(best_len, common_prefix(e->raw, entry));
    // Among entries with that prefix, the last one that sorts before the new entry.
    for (const auto* e : direct) {
      if (common_prefix(e->raw, entry) < best_len) continue;
      if (lower(e->raw) < lower(entry)) after = e;
      else if (!before) before = e;
    }
  }
  const cmake::ListEntry* model = after ? after : before;
  std::string written = text[model->begin] == '"' ? "\"" + entry + "\"" : entry;
  bool first = false;
  if (after) {
    std::string indent = line_indent(text, after->begin, &first);
    size_t nl = text.find('\n', after->end);
    if (nl == std::string::npos) nl = text.size();
    bool shares_line = std::any_of(list.entries.begin(), list.entries.end(),
                                   [&](const auto& e) { return e.begin > after->end && e.begin < nl; });
    if (!first || shares_line || nl > list.close_paren) return Insertion{after->end, " " + written};  // "a.cc b.cc)"
    return Insertion{nl, "\n" + indent + written};
  }
  std::string indent = line_indent(text, before->begin, &first);
  if (!first) return Insertion{before->begin, written + " "};
  size_t ls = text.rfind('\n', before->begin);
  ls = ls == std::string::npos ? 0 : ls + 1;
  return Insertion{ls, indent + written + "\n"};
}

std::string apply_insertions(std::string text, std::vector<Insertion> ins) {
  // Back to front, so offsets stay valid; at one offset the entry that sorts last goes in first and
  // so ends up last.
  std::sort(ins.begin(), ins.end(), [](const Insertion& a, const Insertion& b) {
    return a.offset != b.offset ? a.offset > b.offset : a.text > b.text;
  });
  for (const auto& i : ins) text.replace(i.offset, i.erase, i.text);
  return text;
}

// The bytes to cut so that [begin, end) goes from a CMake file: with its whole line when nothing else is
// on it, else with the blanks before it ("a.cc b.cc" loses " b.cc").
Insertion cut(const std::string& text, size_t begin, size_t end) {
  size_t ls = text.rfind('\n', begin == 0 ? 0 : begin - 1);
  ls = ls == std::string::npos || begin == 0 ? 0 : ls + 1;
  size_t le = text.find('\n', end);
  if (le == std::string::npos) le = text.size();
  auto blank = [&](size_t from, size_t to) {
    return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(from), text.begin() + static_cast<std::ptrdiff_t>(to),
                       [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
  };
  if (blank(ls, begin) && blank(end, le)) return {ls, "", std::min(le + 1, text.size()) - ls};
  size_t from = begin;
  while (from > ls && (text[from - 1] == ' ' || text[from - 1] == '\t')) --from;
  if (from == ls) {  // first on its line, others follow: take the blanks after it instead
    size_t to = end;
    while (to < le && (text[to] == ' ' || text[to] == '\t')) ++to;
    return {begin, "", to - begin};
  }
  return {from, "", end - from};
}

// An imported target for the library in the SDK's CMake package (lib/cmake/*/*.cmake), if any.
std::optional<std::string> imported_target(const trace::TraceContext& ctx, const std::string& link_name) {
  if (!ctx.sdk() || ctx.sdk()->home.empty()) return std::nullopt;
  std::error_code ec;
  for (const char* lib : {"/lib/cmake", "/lib64/cmake"}) {
    fs::path dir = ctx.sdk()->home + lib;
    if (!fs::exists(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file() || it->path().extension() != ".cmake") continue;
      auto text = read_text(it->path().string());
      if (!text) continue;
      auto cmds = cmake::parse_cmake(*text, it->path().string());
      if (!cmds) continue;
      for (const auto& c : cmds.value()) {
        if (c.name != "add_library" || c.args.size() < 2) continue;
        bool imported = std::any_of(c.args.begin(), c.args.end(), [](const auto& a) { return a.value == "IMPORTED"; });
        std::string name = c.args[0].value;
        std::string tail = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
        std::string lower = tail;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (imported && lower == link_name) return name;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Plan plan(const Report& report, const trace::TraceContext& ctx, const StubOptions& o) {
  Plan p;
  Planner planner(ctx, o);
  bool c10 = planner.c10_available();
  std::map<std::string, Block> cpp_blocks, hdr_blocks;
  std::set<std::string> seen;

  // Stubs: what the options ask for; the rest must be fixable by a CMake patch, or is refused.
  struct ListAdd {
    std::string file, list, entry, symbol;
  };
  std::vector<ListAdd> list_adds;
  struct LinkAdd {
    std::string file, target, entry, symbol;
  };
  std::vector<LinkAdd> link_adds;
  // A file a glob of the target matches but list(REMOVE_ITEM)/list(FILTER EXCLUDE) takes out: the entry
  // taking it out goes (the whole call when it was the only one).
  struct Drop {
    const cmake::SourceList* removal;
    const cmake::ListEntry* entry;
    std::string file;     // the source it gives back
    std::string symbol;   // demangled, for a refusal
  };
  std::vector<Drop> drops;

  for (const auto& lib : report.libraries) {
    for (const auto& u : lib.unresolved) {
      if (!seen.insert(u.symbol).second) continue;
      std::string cls = to_string(u.classification);
      if (o.classes.count(cls)) {
        if (u.type == SymbolType::Tls) {
          p.refused.push_back({u.demangled, "thread-local data cannot be stubbed safely"});
          continue;
        }
        if (u.type == SymbolType::Object || dwarf::declared_size(lib.path, u.symbol)) {
          // Storage of exactly the declared size, bound to the symbol by its assembler name.
          std::optional<uint64_t> size = dwarf::declared_size(lib.path, u.symbol);
          if (!size) {
            p.refused.push_back({u.demangled, "a data object of unknown size: the referencing library's DWARF does not "
                                              "declare it, and a guessed size would corrupt memory"});
            continue;
          }
          std::string name = "musa_stub_data_" + hex64(fnv1a(u.symbol)).substr(0, 12);
          std::string block = "// " + std::string(to_string(u.classification)) + ": " + u.demangled + ", " +
                              std::to_string(*size) + " bytes as " + fs::path(lib.path).filename().string() +
                              "'s DWARF declares it (zero-filled; a data stub cannot report its use)\n" +
                              "alignas(16) unsigned char " + name + "[" + std::to_string(*size) + "] __asm__(" +
                              cpp_string(u.symbol) + ") = {};\n";
          if (o.version_guard) {
            block = "#if defined(REAL_MUSA_VERSION) && (REAL_MUSA_VERSION < " + std::to_string(*o.version_guard) + ")\n" +
                    block + "#endif\n";
          }
          cpp_blocks[u.symbol] = {block, ""};
          p.stubs.push_back({u.symbol, "dwarf-size", "unsigned char " + name + "[" + std::to_string(*size) + "]"});
          continue;
        }
        demangle::SymbolName sym = demangle::parse_symbol(u.symbol);
        std::optional<Signature> sig = planner.from_sdk_header(sym);
        if (!sig) sig = planner.from_cuda_header(sym);
        if (!sig) sig = planner.from_stand_in(sym);
        if (!sig) sig = planner.from_demangled(sym);
        if (!sig) sig = planner.asm_label(u);
        std::string uses;
        for (const auto& inc : sig->includes) uses += (uses.empty() ? "" : ",") + inc;
        cpp_blocks[u.symbol] = {stub_block(u, *sig, o, planner, c10), uses};
        if (sig->declare_in_header) {
          std::string decl = "// " + sig->origin + "\nextern \"C\" " + signature_text(*sig) + ";\n";
          if (!sig->c_linkage) decl = "// " + sig->origin + "\n" + namespaced_declaration(*sig);
          if (o.version_guard) {
            decl = "#if defined(REAL_MUSA_VERSION) && (REAL_MUSA_VERSION < " + std::to_string(*o.version_guard) + ")\n" +
                   decl + "#endif\n";
          }
          hdr_blocks[u.symbol] = {decl, ""};
        }
        p.stubs.push_back({u.symbol, sig->source, signature_text(*sig)});
        continue;
      }
      if (u.classification == Classification::MissingSource && u.fix && u.fix->cmake_file && u.fix->list && u.fix->entry) {
        list_adds.push_back({*u.fix->cmake_file, *u.fix->list, *u.fix->entry, u.symbol});
        continue;
      }
      if (u.classification == Classification::MissingSource && ctx.build && u.origin && !u.origin->file.empty()) {
        const auto* t = ctx.build->target_for_artifact(lib.path);
        auto ex = cmake::exclusion_for(*ctx.build, cmake::normalize_path(u.origin->file), t ? t->name : "");
        if (ex && ex->removal) {
          drops.push_back({ex->removal, ex->removal_entry, cmake::normalize_path(u.origin->file), u.demangled});
          continue;
        }
      }
      if ((u.classification == Classification::UnlinkedLibrary || u.classification == Classification::StaticArchive) &&
          u.fix && u.fix->entry) {
        std::string target;
        if (ctx.build)
          if (const auto* t = ctx.build->target_for_artifact(lib.path)) target = t->name;
        if (target.empty()) {
          std::string base = lib.path.substr(lib.path.rfind('/') + 1);
          target = base.rfind("lib", 0) == 0 ? base.substr(3, base.find(".so") - 3) : base;
        }
        std::string file = u.fix->cmake_file.value_or("");
        if (file.empty()) {
          p.refused.push_back({u.demangled, "no CMake file found that defines the target " + target + "; " + u.fix->detail});
          continue;
        }
        link_adds.push_back({file, target, imported_target(ctx, *u.fix->entry).value_or(*u.fix->entry), u.symbol});
        continue;
      }
      std::string why = u.reason.empty() ? cls : cls + ": " + u.reason;
      if (u.classification == Classification::MissingSource)
        why += u.fix && !u.fix->detail.empty() ? "; " + u.fix->detail : " (no CMake source list for it was found)";
      else why += " - not something a stub or a CMake patch fixes" + std::string(o.classes.count(cls) ? "" : " (pass --stub " + cls + " to stub it anyway)");
      p.refused.push_back({u.demangled, why});
    }
  }

  // --- stub files ---
  if (!cpp_blocks.empty() || fs::exists(o.out_cpp)) {
    std::string header_name = fs::path(o.out_header).filename().string();
    std::string cpp_pre = "#include \"" + header_name + "\"\n\n";
    cpp_pre += c10 ? "#include <c10/util/Exception.h>\n" : "#include <stdexcept>\n";
    cpp_pre += "\n#define MUSA_STUBS_IMPLEMENTATION\n#include \"musa_stubs.h\"\n";
    std::string fresh_cpp =
        "// Stubs for functions the SDK does not provide, so that the library links; calling one is reported by\n"
        "// the stub runtime (musa_stubs.h). musa-stubgen rewrites the region between its markers and keeps any\n"
        "// stub edited there; everything outside the markers is yours and is never touched.\n\n";
    auto existing = read_text(o.out_cpp);
    auto m = merge(existing, fresh_cpp, cpp_pre, cpp_blocks, kCppBegin, kCppEnd, o.prune, o.out_cpp);
    if (m.error) {
      p.errors.push_back({o.out_cpp, *m.error});
      p.stub_files_complete = false;
    } else {
      p.warnings.insert(p.warnings.end(), m.warnings.begin(), m.warnings.end());
      p.stub_files.push_back({o.out_cpp, existing.value_or(""), m.text, !existing, {}});
    }

    std::string hdr_pre;
    for (const auto& inc : m.uses) hdr_pre += "#include <" + inc + ">\n";
    hdr_pre += "\n#ifndef __host__\n#define __host__\n#endif\n";
    std::string fresh_hdr =
        "// Declarations of the stubs in " + fs::path(o.out_cpp).filename().string() +
        " that no SDK header declares (musa-stubgen).\n#pragma once\n\n";
    auto existing_h = read_text(o.out_header);
    auto mh = merge(existing_h, fresh_hdr, hdr_pre, hdr_blocks, kHdrBegin, kHdrEnd, o.prune, o.out_header);
    if (mh.error) {
      p.errors.push_back({o.out_header, *mh.error});
      p.stub_files_complete = false;
    } else {
      p.stub_files.push_back({o.out_header, existing_h.value_or(""), mh.text, !existing_h, {}});
    }
    if (!o.runtime_header.empty()) {
      auto runtime = read_text(o.runtime_header);
      std::string dest = (fs::path(o.out_cpp).parent_path() / "musa_stubs.h").string();
      if (!runtime) {
        p.errors.push_back({o.runtime_header, "cannot read the stub runtime header"});
        p.stub_files_complete = false;
      } else {
        auto existing_rt = read_text(dest);
        p.stub_files.push_back({dest, existing_rt.value_or(""), *runtime, !existing_rt, {}});
      }
    }
    std::map<std::string, std::string> demangled;
    for (const auto& lib : report.libraries)
      for (const auto& u : lib.unresolved) demangled.emplace(u.symbol, u.demangled);
    for (auto& f : p.stub_files)
      for (const auto& st : p.stubs) f.purposes.push_back({"add a stub for " + demangled[st.mangled], {st.mangled}});
  }

  // --- CMake files ---
  std::map<std::string, std::vector<Insertion>> inserts;
  // Each CMake file is read and parsed once; a file that cannot be is an error, once.
  struct Parsed {
    std::string text;
    std::vector<cmake::CMakeCommand> commands;
  };
  std::map<std::string, std::optional<Parsed>> parsed;
  auto parsed_of = [&](const std::string& file) -> const Parsed* {
    if (!parsed.count(file)) {
      auto& slot = parsed[file];
      auto t = read_text(file);
      if (!t) {
        p.errors.push_back({file, "cannot read"});
        return nullptr;
      }
      auto cmds = cmake::parse_cmake(*t, file);
      if (!cmds) {
        p.errors.push_back(cmds.error());
        return nullptr;
      }
      slot = Parsed{std::move(*t), std::move(cmds).value()};
    }
    return parsed[file] ? &*parsed[file] : nullptr;
  };
  std::map<std::string, std::string> vars = ctx.build ? ctx.build->variables() : std::map<std::string, std::string>{};
  // The symbols each distinct addition fixes (several symbols often share one missing source), and
  // per patched file, what was added for which symbols.
  std::map<std::string, std::vector<std::string>> fixes_of_add;
  for (const auto& add : list_adds) fixes_of_add[add.file + "\n" + add.list + "\n" + add.entry].push_back(add.symbol);
  for (const auto& add : link_adds) fixes_of_add[add.file + "\nlink\n" + add.target + "\n" + add.entry].push_back(add.symbol);
  std::map<std::string, std::vector<EditPurpose>> purposes;
  auto record = [&](const std::string& file, const std::string& key, const std::string& change) {
    purposes[file].push_back({change, fixes_of_add[key]});
  };
  std::set<std::string> added;
  for (const auto& add : list_adds) {
    std::string key = add.file + "\n" + add.list + "\n" + add.entry;
    if (!added.insert(key).second) continue;
    const Parsed* file = parsed_of(add.file);
    if (!file) continue;
    // The lists as the build read them (its scopes' variables expanded); the file alone otherwise.
    std::vector<cmake::SourceList> lists;
    auto local_vars = vars;
    if (ctx.build)
      for (const auto& l : ctx.build->lists)
        if (l.cmake_file == add.file) lists.push_back(l);
    if (lists.empty()) lists = cmake::find_source_lists(file->commands, add.file, local_vars);
    std::vector<const cmake::SourceList*> named;  // every command writing that list (set, list(APPEND), ...)
    for (const auto& l : lists)
      if (l.variable == add.list && !l.removal) named.push_back(&l);
    if (named.empty()) {
      p.refused.push_back({add.entry, "the list " + add.list + " is not in " + add.file});
      continue;
    }
    // Only the commands the configure took count (those whose files the build compiles): an entry in
    // an if() branch that is not taken changes nothing, there or as a duplicate.
    if (ctx.build) {
      std::vector<const cmake::SourceList*> live;
      for (const auto* l : named)
        if (cmake::feeds_build(*ctx.build, *l)) live.push_back(l);
      if (!live.empty()) named = live;
    }
    // Present by spelling, or by the file the entry names once its variables are expanded.
    const std::string& dir = named.front()->current_dir;
    local_vars["CMAKE_CURRENT_SOURCE_DIR"] = dir;
    local_vars["CMAKE_CURRENT_LIST_DIR"] = add.file.substr(0, add.file.rfind('/'));
    std::string expanded = cmake::expand_variables(add.entry, local_vars);
    expanded = cmake::normalize_path(!expanded.empty() && expanded[0] == '/' ? expanded : dir + "/" + expanded);
    bool present = false;
    for (const auto* l : named)
      for (const auto& e : l->entries) {
        present |= e.raw == add.entry;
        for (const auto& f : e.files) present |= f == expanded;
      }
    if (present) {
      p.warnings.push_back(add.entry + " is already in " + add.list + " (" + add.file + "): not added again");
      continue;
    }
    // Of several commands writing the list (if/else branches, list(APPEND)), the one holding the
    // entry's nearest siblings.
    const cmake::SourceList* list = named.back();
    size_t best = 0;
    for (const auto* l : named)
      for (const auto& e : l->entries) {
        if (cmake::is_indirect_entry(e.raw)) continue;
        size_t len = common_prefix(e.raw, add.entry);
        if (len > best) best = len, list = l;
      }
    if (auto ins = insertion_for(file->text, *list, add.entry)) {
      inserts[add.file].push_back(*ins);
      record(add.file, key, "add " + add.entry + " to " + add.list);
    }
  }
  for (const auto& add : link_adds) {
    std::string key = add.file + "\nlink\n" + add.target + "\n" + add.entry;
    if (!added.insert(key).second) continue;
    const Parsed* file = parsed_of(add.file);
    if (!file) continue;
    const std::string* text = &file->text;
    const cmake::CMakeCommand* link = nullptr;
    const cmake::CMakeCommand* creator = nullptr;
    for (const auto& c : file->commands) {
      if (c.args.empty() || c.args[0].value != add.target) continue;
      if (c.name == "target_link_libraries") link = &c;
      if (c.name == "add_library" || c.name == "musa_add_library" || c.name == "cuda_add_library") creator = &c;
    }
    if (link) {
      bool present = std::any_of(link->args.begin(), link->args.end(), [&](const auto& a) { return a.value == add.entry; });
      if (present) continue;
      inserts[add.file].push_back({link->args.back().end, " " + add.entry});
      record(add.file, key, "link " + add.target + " with " + add.entry);
    } else if (creator) {
      size_t nl = text->find('\n', creator->close_paren);
      inserts[add.file].push_back({nl == std::string::npos ? text->size() : nl,
                                   "\ntarget_link_libraries(" + add.target + " PRIVATE " + add.entry + ")"});
      record(add.file, key, "link " + add.target + " with " + add.entry);
    } else {
      p.refused.push_back({add.entry, "no target_link_libraries() or add_library() for " + add.target + " in " + add.file});
    }
  }
  // Drops, by the command they edit. A FILTER regex goes only when everything it excludes is wanted
  // back; otherwise dropping it would compile files the project keeps out on purpose.
  std::set<std::string> wanted;
  for (const auto& d : drops) wanted.insert(d.file);
  std::map<const cmake::SourceList*, std::set<const cmake::ListEntry*>> dropped;
  for (const auto& d : drops) {
    if (d.removal->filter) {
      std::vector<std::string> others;
      for (const auto& f : d.entry->files)
        if (!wanted.count(cmake::normalize_path(f))) others.push_back(f);
      if (!others.empty()) {
        p.refused.push_back({d.symbol, "missing-source: " + d.file + " is excluded by list(FILTER " + d.removal->variable +
                                           " EXCLUDE REGEX " + d.entry->raw + ") at " + d.removal->cmake_file + ":" +
                                           std::to_string(d.removal->line) + ", which also excludes " + others.front() +
                                           (others.size() > 1 ? " and " + std::to_string(others.size() - 1) + " more" : "") +
                                           ": narrow that regex by hand"});
        continue;
      }
    }
    dropped[d.removal].insert(d.entry);
  }
  for (const auto& [removal, entries] : dropped) {
    const Parsed* file = parsed_of(removal->cmake_file);
    if (!file) continue;
    const cmake::CMakeCommand* cmd = nullptr;
    for (const auto& c : file->commands)
      if (c.close_paren == removal->close_paren) cmd = &c;
    if (!cmd) continue;
    const std::string where = removal->cmake_file + ":" + std::to_string(removal->line);
    if (entries.size() == removal->entries.size()) {
      // Nothing left for the call to take out: the call goes, with its line.
      inserts[removal->cmake_file].push_back(cut(file->text, cmd->begin, cmd->close_paren + 1));
      std::string what = removal->filter ? "list(FILTER " + removal->variable + " EXCLUDE REGEX " + removal->entries[0].raw + ")"
                                         : "list(REMOVE_ITEM " + removal->variable + " ...)";
      p.notes.push_back("removing " + what + " at " + where + ": it takes out " + std::to_string(entries.size()) +
                        " source" + (entries.size() == 1 ? "" : "s") + " the library needs");
    } else {
      for (const auto* e : entries) {
        inserts[removal->cmake_file].push_back(cut(file->text, e->begin, e->end));
        p.notes.push_back("dropping " + e->raw + " from list(REMOVE_ITEM " + removal->variable + " ...) at " + where +
                          ": it takes out a source the library needs");
      }
    }
  }
  for (auto& [file, ins] : inserts) {
    const std::string& text = parsed[file]->text;
    p.cmake_files.push_back({file, text, apply_insertions(text, ins), false, purposes[file]});
  }
  return p;
}

std::string diff_of(const Plan& plan, const StubOptions& o, bool include_stubs, bool include_cmake) {
  std::string out;
  auto rel = [&](const std::string& path) {
    if (!o.relative_to.empty() && path.rfind(o.relative_to + "/", 0) == 0) return path.substr(o.relative_to.size() + 1);
    return fs::path(path).is_absolute() ? path.substr(1) : path;
  };
  // A CMake patch is applied from the checkout: its paths are relative to the git work tree that
  // holds the file (a .git directory or file above it), or else to the project's source dir.
  auto repo_rel = [&](const std::string& path) {
    for (fs::path dir = fs::path(path).parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      std::error_code ec;
      if (fs::exists(dir / ".git", ec)) return path.substr(dir.string().size() + 1);
    }
    return rel(path);
  };
  if (include_cmake)
    for (const auto& f : plan.cmake_files) out += unified_diff(repo_rel(f.path), f.before, f.after, f.created);
  if (include_stubs)
    for (const auto& f : plan.stub_files) out += unified_diff(rel(f.path), f.before, f.after, f.created);
  return out;
}

std::vector<InputError> apply(const Plan& plan, bool include_stubs, bool include_cmake) {
  std::vector<InputError> errors;
  auto write = [&](const FileEdit& f) {
    if (!f.changed()) return;
    if (auto err = write_atomic(f.path, f.after)) errors.push_back(*err);
  };
  if (include_stubs)
    for (const auto& f : plan.stub_files) write(f);
  if (include_cmake)
    for (const auto& f : plan.cmake_files) write(f);
  return errors;
}

}  // namespace mlc::stubgen
