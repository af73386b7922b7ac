// The resolver: one precedence over the passes' claims (docs/design.md, "Evidence order").
#include "verdict/verdict.h"

namespace mlc::verdict {

namespace {

// A pass claims, then says why, where and how to fix: what the finding holds when the next claim is made (or
// at the resolve) is the last claim's evidence, with what earlier passes said and it left standing.
void close_last(UnresolvedSymbol& u) {
  if (!u.claims.empty() && !u.claims.back().evidence)
    u.claims.back().evidence = ClaimEvidence{.why = u.why, .origin = u.origin, .fix = u.fix};
}

const Claim& winner(const UnresolvedSymbol& u) {
  const Claim* best = &u.claims.front();
  for (const Claim& c : u.claims)
    if (c.by >= best->by) best = &c;  // a later claim of the same pass replaces its earlier one
  return *best;
}

}  // namespace

void claim(UnresolvedSymbol& u, EvidencePass by, Classification is) {
  close_last(u);
  u.claims.push_back({.by = by, .is = is});
}

Classification current(const UnresolvedSymbol& u) { return u.claims.empty() ? u.classification : winner(u).is; }

// The winning claim whole: a lower-ranked pass that ran later leaves no sentence, definition or fix of its own
// beside a higher pass's classification.
void resolve(UnresolvedSymbol& u) {
  if (!u.claims.empty()) {
    close_last(u);
    const Claim& best = winner(u);
    if (&best != &u.claims.back()) {
      u.why = best.evidence->why;
      u.origin = best.evidence->origin;
      u.fix = best.evidence->fix;
    }
  }
  u.classification.write(Pen{}, current(u));
}

std::vector<EvidencePass> precedence() {
  std::vector<EvidencePass> all;
  for (int p = 0; p <= static_cast<int>(EvidencePass::Provider); ++p) all.push_back(static_cast<EvidencePass>(p));
  return all;
}

}  // namespace mlc::verdict
