// The stubs themselves. Signatures come, in order, from the SDK header's declaration, the CUDA
// counterpart's declaration mapped to MUSA names, a torch_musa stand-in's mangled parameters, the
// demangled name, and last an assembler label that binds the mangled name whatever the signature.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "backend/backend.h"
#include "common/file_io.h"
#include "common/paths.h"
#include "common/walk.h"
#include "demangle/demangle.h"
#include "demangle/symbol_name.h"
#include "porting/porting_map.h"
#include "source/scanner.h"
#include "stubgen/internal.h"
#include "trace/stand_in.h"

namespace mlc::stubgen::detail {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> identifiers(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (is_ident_char(text[i]) && !std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t s = i;
      while (i < text.size() && is_ident_char(text[i])) ++i;
      out.emplace_back(text.substr(s, i - s));
    } else {
      ++i;
    }
  }
  return out;
}

bool is_builtin_word(const std::string& w) {
  static const std::set<std::string> words = {
      "void",      "bool",     "char",       "short",   "int",      "long",        "float",    "double",   "unsigned",
      "signed",    "const",    "volatile",   "struct",  "enum",     "union",       "size_t",   "ssize_t",  "ptrdiff_t",
      "int8_t",    "int16_t",  "int32_t",    "int64_t", "uint8_t",  "uint16_t",    "uint32_t", "uint64_t", "intptr_t",
      "uintptr_t", "__host__", "__device__", "wchar_t", "restrict", "__restrict__"};
  return words.count(w) > 0;
}

// --version-guard N: the stub is compiled only against an SDK older than N, which may have the real one.
// The macro is the backend's (REAL_MUSA_VERSION, HIP_VERSION).
std::string guarded(const std::string& block, const StubOptions& o, const backend::Backend& b) {
  if (!o.version_guard) return block;
  const std::string& v = b.version_macro;
  return "#if defined(" + v + ") && (" + v + " < " + std::to_string(*o.version_guard) + ")\n" + block + "#endif\n";
}

struct Signature {
  SignatureSource source = SignatureSource::Demangled;
  std::string return_type = "void";
  std::string name;  // C name, unqualified C++ name, or the asm-label function's name
  std::vector<std::string> params;
  std::vector<std::string> param_names;
  std::string trailing;
  bool c_linkage = false;
  std::vector<std::string> scopes;   // namespaces of a C++ stub
  std::vector<std::string> forward;  // forward declarations the C++ stub needs
  std::set<std::string> includes;    // SDK headers (relative to include/)
  std::string asm_label;             // set for asm-label stubs
  std::string origin;                // "declared in musa_runtime_api.h:15"
  bool declare_in_header = false;
  std::string display;  // the name the stub's message gives, when not the default
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
    if (e->kind != source::EntityKind::FunctionDeclaration && e->kind != source::EntityKind::FunctionDefinition)
      continue;
    const std::string& path = index.file_of(*e).path;
    auto text = read_text(path);
    if (!text) continue;
    auto raw = source::raw_declaration(*text, e->line, name, backend::api_macros());
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
    Signature s = from_raw(d.raw, SignatureSource::SdkHeader);
    s.includes.insert(relative_include(d.file, ctx_.sdk()->home));
    s.origin = "declared in " + relative_include(d.file, ctx_.sdk()->home) + ":" + std::to_string(d.line);
    return s;
  }

  // CUDA counterpart: its declaration with CUDA names mapped to MUSA names; only when every type
  // it names is known to the SDK's headers (or is a builtin).
  std::optional<Signature> from_cuda_header(const demangle::SymbolName& sym) {
    if (!ctx_.cuda() || !ctx_.mapping || sym.kind != demangle::NameKind::CName) return std::nullopt;
    std::string cuda_name = porting::to_cuda_name(sym.name, *ctx_.mapping, ctx_.backend->port_naming);
    if (cuda_name == sym.name) return std::nullopt;
    const auto& to_musa = ctx_.mapping->to_musa;
    for (auto d : declarations_in(ctx_.cuda()->headers, cuda_name)) {
      d.raw.return_type = porting::map_identifiers(d.raw.return_type, to_musa);
      for (auto& p : d.raw.params) p = porting::map_identifiers(p, to_musa);
      d.raw.name = sym.name;
      Signature s = from_raw(d.raw, SignatureSource::CudaHeader);
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
                 "), names mapped to " + ctx_.backend->display;
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
      SignatureSource source;
    };
    std::vector<Model> models;
    if (ctx_.sdk())
      for (auto& d : declarations_in(ctx_.sdk()->headers, sym.name))
        models.push_back({std::move(d), "the SDK's", SignatureSource::SdkHeader});
    if (ctx_.cuda()) {
      for (auto d : declarations_in(ctx_.cuda()->headers, cuda_name)) {
        d.raw.return_type = porting::map_identifiers(d.raw.return_type, ctx_.mapping->to_musa);
        for (auto& p : d.raw.params) p = porting::map_identifiers(p, ctx_.mapping->to_musa);
        models.push_back({std::move(d), "CUDA's " + cuda_name + ",", SignatureSource::CudaHeader});
      }
    }
    // The model whose parameters agree with the most of the mangled ones (the SDK's first on ties).
    const Model* best = nullptr;
    size_t best_agree = 0;
    for (const auto& m : models) {
      size_t agree = 0;
      for (size_t k = 0; k < want.size() && k < m.d.raw.params.size(); ++k)
        agree += resolved_type(m.d.raw.params[k]) == want[k];
      if (m.d.raw.params.size() == want.size()) agree += want.size() + 1;  // the same arity first
      if (!best || agree > best_agree) {
        best = &m;
        best_agree = agree;
      }
    }
    if (!best) return std::nullopt;
    Signature s;
    s.source = best->source;
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
    s.origin = "stand-in for " + sym.name +
               ", which the SDK lacks: parameter types from the mangled name, spellings from " + best->from + " " +
               best->d.file.substr(best->d.file.rfind('/') + 1) + ":" + std::to_string(best->d.line);
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
        if (is_ident_char(t[i]) && !std::isdigit(static_cast<unsigned char>(t[i]))) {
          size_t b = i;
          while (i < t.size() && is_ident_char(t[i])) ++i;
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
    s.source = SignatureSource::Demangled;
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
    s.source = SignatureSource::AsmLabel;
    s.name = backend::stub_name(*ctx_.backend, "") + stub_hash(u.symbol).substr(0, 12);
    s.asm_label = u.symbol;
    s.c_linkage = true;
    s.origin = "signature unknown: bound by its assembler name, which links whatever the signature";
    return s;
  }

  static Signature from_raw(const source::RawDeclaration& raw, SignatureSource source) {
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

  // The SDK's error type a function returns (musaError_t), if it returns one.
  static std::optional<std::string> error_type(const Signature& s) {
    const std::string& rt = s.return_type;
    auto pos = rt.find("Error_t");
    if (pos == std::string::npos) return std::nullopt;
    size_t start = pos;
    while (start > 0 && is_ident_char(rt[start - 1])) --start;
    return rt.substr(start, pos + 7 - start);
  }

  // The "not supported" value of the SDK's error enum (musaError_t -> musaErrorNotSupported), when
  // an SDK header defines it.
  std::optional<std::string> error_value(const Signature& s) {
    auto type = error_type(s);
    if (!type) return std::nullopt;
    std::string value = type->substr(0, type->size() - 7) + "ErrorNotSupported";
    if (!ctx_.sdk()) return std::nullopt;
    for (const auto& f : ctx_.sdk()->headers.files()) {
      auto text = read_text(f.path);
      if (!text) continue;
      for (size_t p = text->find(value); p != std::string::npos; p = text->find(value, p + 1)) {
        bool start_ok = p == 0 || !is_ident_char((*text)[p - 1]);
        bool end_ok = p + value.size() >= text->size() || !is_ident_char((*text)[p + value.size()]);
        if (start_ok && end_ok) return value;
      }
    }
    return std::nullopt;
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

std::string stub_block(const UnresolvedSymbol& u, const Signature& s, const StubOptions& o, const backend::Backend& b,
                       Planner& planner, bool c10) {
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
    case Style::Abort: out += "  " + backend::stub_name(b, "abort") + "(" + names + ");\n"; break;
    case Style::ReturnError: out += "  " + backend::stub_name(b, "enter") + "(" + names + ");\n" + ret; break;
    case Style::Throw:
      out += "  if (" + backend::stub_name(b, "enter") + "(" + names + ") == " + backend::stub_constant(b, "THROW") +
             ") {\n" + raise + "  }\n" + ret;
      break;
  }
  out += "}\n" + close_ns;
  return guarded(out, o, b);
}

}  // namespace

bool c10_available(const trace::TraceContext& ctx, const StubOptions& o) {
  if (o.c10) return *o.c10;
  if (!ctx.sources) return false;
  for (const auto& f : ctx.sources->files()) {
    const std::string& p = f.path;
    if (p.size() > 22 && p.compare(p.size() - 22, 22, "c10/util/Exception.h") == 0) return true;
  }
  return false;
}

Stub function_stub(const UnresolvedSymbol& u, const trace::TraceContext& ctx, const StubOptions& o, bool c10) {
  Planner planner(ctx, o);
  demangle::SymbolName sym = demangle::parse_symbol(u.symbol);
  std::optional<Signature> sig = planner.from_sdk_header(sym);
  if (!sig) sig = planner.from_cuda_header(sym);
  if (!sig) sig = planner.from_stand_in(sym);
  if (!sig) sig = planner.from_demangled(sym);
  if (!sig) sig = planner.asm_label(u);
  Stub stub;
  // --style return-error returns the SDK's "not supported" code: without one (an error type that is a
  // plain int, say) the only value left is 0, which callers read as success.
  if (o.style == Style::ReturnError && sig->asm_label.empty() && !planner.error_value(*sig)) {
    if (auto type = Planner::error_type(*sig)) {
      stub.refused = "--style return-error: the SDK's headers define no " + type->substr(0, type->size() - 7) +
                     "ErrorNotSupported for its " + *type +
                     " (not an enum of error codes), so the stub could only "
                     "return 0, which is success: stub it with --style throw or abort";
      return stub;
    }
    stub.throws_instead = sig->return_type != "void";
  }
  for (const auto& inc : sig->includes) stub.definition.uses += (stub.definition.uses.empty() ? "" : ",") + inc;
  stub.definition.body = stub_block(u, *sig, o, *ctx.backend, planner, c10);
  if (sig->declare_in_header) {
    std::string decl = "// " + sig->origin + "\nextern \"C\" " + signature_text(*sig) + ";\n";
    if (!sig->c_linkage) decl = "// " + sig->origin + "\n" + namespaced_declaration(*sig);
    stub.declaration = Block{guarded(decl, o, *ctx.backend), ""};
  }
  stub.info = {u.symbol, sig->source, signature_text(*sig)};
  return stub;
}

namespace {

// How the stub file includes the generated header: relative to the build's include directory that
// holds it (the generated directory is on the backend's include path, or its Register<Backend>.cpp
// would not compile), else as the generated Register<Backend>.cpp spells it.
std::string generated_include(const std::string& header, const codegen::BackendYaml& y,
                              const trace::TraceContext& ctx) {
  std::string best;
  if (ctx.build)
    for (const auto& d : codegen::include_dirs(*ctx.build))
      if (header.rfind(d + "/", 0) == 0 && d.size() > best.size()) best = d;
  if (!best.empty()) return header.substr(best.size() + 1);
  std::string name = fs::path(header).filename().string();
  if (auto reg = read_text(y.output_dir + "/Register" + y.backend + ".cpp")) {
    std::istringstream in(*reg);
    for (std::string line; std::getline(in, line);) {
      size_t q = line.find('"');
      if (line.rfind("#include", 0) == 0 && q != std::string::npos && line.find(name + "\"") != std::string::npos)
        return line.substr(q + 1, line.rfind('"') - q - 1);
    }
  }
  return name;
}

}  // namespace

std::optional<Stub> kernel_stub(const UnresolvedSymbol& u, const trace::TraceContext& ctx, const StubOptions& o) {
  if (!ctx.codegen) return std::nullopt;
  demangle::SymbolName sym = demangle::parse_symbol(u.symbol);
  codegen::KernelMatch m = codegen::match_kernel(*ctx.codegen, sym);
  if (m.entries.empty() || !m.declaration) return std::nullopt;
  const codegen::KernelEntry& e = *m.entries.front();
  const codegen::GeneratedDeclaration& d = *m.declaration;
  Signature s;
  s.return_type = d.return_type;
  s.name = sym.qualified();
  s.params = d.params;
  std::string block = "// " + std::string(to_string(u.classification)) + ": " + e.op + ", listed in " + m.yaml->path +
                      ":" + std::to_string(e.line) + "; declared in " + d.file + ":" + std::to_string(d.line) + "\n" +
                      signature_text(s) + " {\n  throw std::runtime_error(" +
                      cpp_string(e.op + " is not implemented for " + m.yaml->backend) + ");\n}\n";
  std::string header = generated_include(d.file, *m.yaml, ctx);
  Stub stub;
  stub.definition = {guarded(block, o, *ctx.backend), "stdexcept," + header};
  stub.info = {u.symbol, SignatureSource::GeneratedHeader, signature_text(s)};
  return stub;
}

Stub data_stub(const UnresolvedSymbol& u, uint64_t size, const std::string& library, const StubOptions& o,
               const backend::Backend& b) {
  std::string name = backend::stub_name(b, "data_") + stub_hash(u.symbol).substr(0, 12);
  std::string block = "// " + std::string(to_string(u.classification)) + ": " + u.demangled + ", " +
                      std::to_string(size) + " bytes as " + fs::path(library).filename().string() +
                      "'s DWARF declares it (zero-filled; a data stub cannot report its use)\n" +
                      "alignas(16) unsigned char " + name + "[" + std::to_string(size) + "] __asm__(" +
                      cpp_string(u.symbol) + ") = {};\n";
  return {.definition = {guarded(block, o, b), ""},
          .declaration = std::nullopt,
          .info = {u.symbol, SignatureSource::DwarfSize, "unsigned char " + name + "[" + std::to_string(size) + "]"}};
}

}  // namespace mlc::stubgen::detail
