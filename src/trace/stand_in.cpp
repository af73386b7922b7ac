// Recognises torch_musa's namespaced stand-ins for runtime APIs the SDK lacks
// (c10::musa::musaMallocAsync): the unqualified name, mapped back through the porting map, is a C
// function that CUDA's runtime declares or exports.
#include "trace/stand_in.h"

#include "report/said.h"
#include "verdict/verdict.h"

namespace mlc::trace {

using demangle::NameKind;
using source::EntityKind;

std::string stand_in_cuda_name(const demangle::SymbolName& sym, const porting::PortingMap& map) {
  // A free, non-template function in a namespace: what `__host__ musaError_t musaX(...)` inside
  // `namespace c10 { namespace musa {` mangles to.
  if (sym.kind != NameKind::Function || sym.scopes.empty() || !sym.template_args.empty() ||
      !sym.method_qualifiers.empty() || sym.is_constructor || sym.is_destructor) {
    return "";
  }
  // An unqualified name: only the identifier map applies (no scope to rename).
  std::string cuda = porting::map_identifiers(sym.name, map.to_cuda);
  return cuda == sym.name ? "" : cuda;
}

bool check_stand_in(const demangle::SymbolName& sym, const TraceContext& ctx, const std::optional<Origin>& declared,
                    UnresolvedSymbol& u) {
  if (!ctx.mapping) return false;
  std::string cuda = stand_in_cuda_name(sym, *ctx.mapping);
  if (cuda.empty()) return false;
  std::string scope;
  for (const auto& s : sym.scopes) scope += (scope.empty() ? "" : "::") + s;
  if (ctx.sources) {
    // A class of that name makes it a method, which torch_musa's convention never uses.
    for (const auto* e : ctx.sources->lookup(sym.scopes.back()))
      if (e->kind == EntityKind::ClassDefinition && e->qualified == scope) return false;
  }
  const sdk::SdkIndex* cuda_index = ctx.cuda();
  if (!cuda_index) return false;
  const sdk::SdkLibrary* lib = cuda_index->first_exporter(cuda);
  const source::IndexedEntity* decl = nullptr;
  for (const auto* e : cuda_index->headers.lookup(cuda)) {
    bool function = e->kind == EntityKind::FunctionDeclaration || e->kind == EntityKind::FunctionDefinition;
    if (function && e->qualified == cuda) decl = e;  // a C function, not a namespace member of CUDA's C++ API
  }
  if (!lib && !decl) return false;
  std::string qualified = scope + "::" + sym.name;
  std::optional<Origin> where = declared;
  if (!where && ctx.sources) {
    // Its parameters are spelled with the SDK's typedefs, which the source index may not resolve:
    // the qualified name and the arity find the stand-in's declaration.
    for (const auto* e : ctx.sources->lookup(sym.name)) {
      size_t arity = source::split_list(e->params).size();
      bool no_params = sym.params.empty() || (sym.params.size() == 1 && sym.params[0] == "void");
      if (e->kind != EntityKind::FunctionDeclaration || e->qualified != qualified ||
          arity != (no_params ? 0 : sym.params.size())) {
        continue;
      }
      where = Origin{.file = ctx.sources->file_of(*e).path,
                     .line = static_cast<int>(e->line),
                     .kind = OriginKind::Declaration,
                     .library = std::nullopt,
                     .ported_from = std::nullopt};
      break;
    }
  }
  if (const sdk::SdkIndex* sdk = ctx.sdk()) {
    if (const sdk::SdkLibrary* has = sdk->first_exporter(sym.name)) {
      // The SDK caught up: the stand-in's declaration now hides the real C function.
      say(u, said::StandInHidesReal{.qualified = qualified, .name = sym.name, .definer = has->path});
      if (where) u.origin = where;
      u.fix = Fix{.kind = FixKind::None,
                  .cmake_file = {},
                  .list = {},
                  .entry = {},
                  .library = {},
                  .why = saying(said::RemoveStandIn{.qualified = qualified, .soname = has->soname, .name = sym.name})};
      return true;
    }
  }
  verdict::claim(u, EvidencePass::Trace, Classification::CudaOnly);
  u.counterpart = Counterpart{.name = cuda, .library = lib ? std::optional<std::string>(lib->path) : std::nullopt};
  say(u, said::StandInSdkLacks{.scope = scope,
                               .name = sym.name,
                               .sdk = ctx.backend->display,
                               .cuda = cuda,
                               .library = lib ? lib->path : "",
                               .declared_in = lib ? "" : cuda_index->headers.file_of(*decl).path});
  if (where) u.origin = where;
  u.fix = Fix{.kind = FixKind::Stub,
              .cmake_file = {},
              .list = {},
              .entry = {},
              .library = {},
              .why = saying(said::DefineStandIn{.qualified = qualified, .name = sym.name})};
  return true;
}

}  // namespace mlc::trace
