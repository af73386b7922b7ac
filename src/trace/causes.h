// Shared causes: one explanation for many findings, told once. A stale copy of a library picked
// before the right one (shadowed, version-mismatch), symbols the host process provides (the Python
// interpreter, perl), and the did-you-mean lines that such causes make noise of.
#pragma once

#include <utility>
#include <vector>

#include "loader/binding.h"
#include "loader/loader.h"
#include "report/report.h"
#include "trace/finding.h"

namespace mlc::trace {

// Pass (before origin tracing): for each unresolved reference and missing version node that another
// candidate copy of a loaded library (loader::other_copies) would have satisfied,
// classify it shadowed (the picked copy lacks the symbol) or version-mismatch (it lacks the version
// node), link it to one Cause per (picked, other) pair in `causes`, and set its reason and fix.
// Candidates are read (symbols and versions only) when a finding could concern them.
void find_shadowing(const loader::Process& process, std::vector<SymbolFinding>& symbols,
                    std::vector<VersionFinding>& versions, CauseList& causes);

struct TraceContext;

// Pass (after shadowing, when a build is known): what the build produces comes first. A shadowed
// symbol whose picked copy is this build's own product (a File API artifact, or a file under the
// build tree) is traced again through the sources; when an uncompiled source of the build defines
// it, it becomes missing-source, the other copy is mentioned in its reason, and the cause no longer
// counts it (a cause left with nothing to explain is dropped). Returns how many it reclaimed.
size_t reclaim_own_build(const loader::Process& process, std::vector<SymbolFinding>& symbols, const TraceContext& ctx,
                         CauseList& causes);

// Pass (after origin tracing): symbols still unexplained that belong to a host program's API -
// the Python C API (Py*, _Py*) from the interpreter, Perl's XS API (Perl_*, PL_*) from perl - get
// one Cause per host. Returns the symbols it did not explain.
std::vector<UnresolvedSymbol*> find_host_symbols(const std::vector<UnresolvedSymbol*>& symbols, CauseList& causes);

// Pass (after suggestions): drops implausible did-you-mean lines - for a name in namespace std, a
// definition from another top-level namespace - and every suggestion on a finding a cause explains.
void filter_suggestions(const std::vector<UnresolvedSymbol*>& symbols);

}  // namespace mlc::trace
