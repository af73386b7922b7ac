// "Did you mean": for a symbol nothing defines, the loaded definitions that differ from it only in
// the way ABI drift makes them differ - other parameter types (by value vs const&), constness,
// the cxx11 ABI tag, another namespace, or C versus C++ linkage - as lld suggests, but aware of
// what lld misses (cxx11-ABI variants and namespace moves).
#pragma once

#include <vector>

#include "loader/loader.h"
#include "report/report.h"

namespace mlc::trace {

// Adds suggestions to each symbol (and reclassifies as abi-mismatch when the same function is
// defined with another signature). One pass over the loaded objects' exported symbols for all.
void suggest(const loader::Process& process, const std::vector<UnresolvedSymbol*>& symbols);

}  // namespace mlc::trace
