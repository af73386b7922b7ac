// "Did you mean": for a symbol nothing defines, the loaded definitions that differ from it only in
// the way ABI drift makes them differ - other parameter types (by value vs const&), constness,
// the cxx11 ABI tag, another namespace, or C versus C++ linkage - as lld suggests, but aware of
// what lld misses (cxx11-ABI variants and namespace moves).
#pragma once

#include <vector>

#include "loader/loader.h"
#include "report/report.h"
#include "source/source_index.h"

namespace mlc::trace {

// Adds suggestions to each symbol and reclassifies: abi-mismatch when the same function is defined
// with another signature (the reason names the drift: cxx11-abi, by-value, const, signature);
// missing-instantiation when only other instantiations of the same template exist, in the loaded
// objects or as explicit instantiations in `sources`. Symbols that tracing gave an origin are only
// checked for missing instantiations. One pass over the loaded objects' exported symbols for all.
void suggest(const loader::Process& process, const std::vector<UnresolvedSymbol*>& symbols,
             const source::SourceIndex* sources = nullptr);

}  // namespace mlc::trace
