// The findings at the loader's level, and where their references and sources are: the passes that
// come before tracing and what tracing asks of them (docs/design.md, "Evidence order" rows 1-2).
#pragma once

#include <optional>
#include <vector>

#include "elf/elf_object.h"
#include "loader/loader.h"
#include "report/said.h"
#include "trace/finding.h"
#include "trace/resources.h"

namespace mlc::trace {

// A dynamic symbol's type as the report names it.
SymbolType symbol_type(elf::SymbolType t);

// The loader's claim on a miss (EvidencePass::Loader): its class, its reason and, where the loader
// alone knows it (a version or visibility), its fix.
void classify_loader_miss(const loader::Process& p, const loader::UnresolvedRef& ref, UnresolvedSymbol& u);

// A definition present only in a .symtab (not exported) explains a NoDefinition miss: hidden
// (EvidencePass::Unexported).
void find_unexported(const loader::Process& p, std::vector<SymbolFinding>& findings);

// Whether tracing looks at a finding: no cause explains it, and it is unknown, or a NoDefinition miss
// beside a missing library.
bool wants_tracing(const UnresolvedSymbol& u, const loader::UnresolvedRef& ref);

// What "defined nowhere" covered, so a reader knows which context was missing.
said::DefinedNowhere nowhere_reason(const TraceContext& ctx, const UnresolvedSymbol& u);

// Where each finding is referenced in its library's source (DWARF call sites), which are variables,
// and their sizes.
void locate_references(const loader::Process& process, std::vector<SymbolFinding>& findings);

// Where the referencing libraries' own DWARF says they were built (the natural call, with no source
// tree or build named): the roots to search and the units compiled. None when it names nothing here.
std::optional<InferredSources> dwarf_sources(const loader::Process& process,
                                             const std::vector<SymbolFinding>& findings);

}  // namespace mlc::trace
