// A finding classified as the pipeline classifies one: a pass claims, the resolver decides. Tests have
// no other way to set a classification (report/sealed.h).
#pragma once

#include "report/report.h"
#include "verdict/verdict.h"

namespace mlc::test {

inline void classify(UnresolvedSymbol& u, Classification c, EvidencePass by = EvidencePass::Trace) {
  verdict::claim(u, by, c);
  verdict::resolve(u);
}

}  // namespace mlc::test
