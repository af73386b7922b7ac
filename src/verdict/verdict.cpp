// The resolver: one precedence over the passes' claims (docs/design.md, "Evidence order").
#include "verdict/verdict.h"

namespace mlc::verdict {

void claim(UnresolvedSymbol& u, EvidencePass by, Classification is) { u.claims.push_back({.by = by, .is = is}); }

Classification current(const UnresolvedSymbol& u) {
  if (u.claims.empty()) return u.classification;
  const Claim* best = &u.claims.front();
  for (const Claim& c : u.claims)
    if (c.by >= best->by) best = &c;  // a later claim of the same pass replaces its earlier one
  return best->is;
}

void resolve(UnresolvedSymbol& u) { u.classification.write(Pen{}, current(u)); }

std::vector<EvidencePass> precedence() {
  std::vector<EvidencePass> all;
  for (int p = 0; p <= static_cast<int>(EvidencePass::Provider); ++p) all.push_back(static_cast<EvidencePass>(p));
  return all;
}

}  // namespace mlc::verdict
