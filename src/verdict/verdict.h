// The one decision of a finding's classification. The passes (the loader's miss, the .symtab, stale
// copies, missing libraries, the tracer, the compiler, the host passes, near misses, provider
// mismatches) each claim what their evidence shows; resolve() picks among the claims by the declared
// precedence of EvidencePass (src/report/report.h) and writes the classification. The passes read the
// verdict so far with current(), never the field itself.
#pragma once

#include <vector>

#include "report/report.h"

namespace mlc::verdict {

// Records that pass `by` concludes `is` about `u`.
void claim(UnresolvedSymbol& u, EvidencePass by, Classification is);

// The classification `u`'s claims support: that of the highest-ranked pass that claimed, the last of
// its claims. A finding no pass has claimed keeps its own (a saved report's, read back).
Classification current(const UnresolvedSymbol& u);

// Sets u.classification to current(u): the one writer of a classification but the reader of a saved
// report (report/sealed.h).
void resolve(UnresolvedSymbol& u);

// Every pass, lowest rank first: the precedence table.
std::vector<EvidencePass> precedence();

}  // namespace mlc::verdict
