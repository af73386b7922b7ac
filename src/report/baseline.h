// Baselines: findings a project accepts for now, so CI fails only on new ones. The file is text,
// one finding per line, sorted - easy to review in a diff:
//   <library> undefined <symbol>[@<version>]
//   <library> missing-library <name>
//   <library> missing-version <file> <version>
// <library> is the soname (or file name) of the library the finding belongs to; '#' starts a comment.
#pragma once

#include <set>
#include <string>

#include "common/result.h"
#include "report/report.h"

namespace mlc {

using Baseline = std::set<std::string>;

Result<Baseline> read_baseline(const std::string& path);
// Every finding of the report, as keys (what --update-baseline writes).
Baseline baseline_of(const Report& report);
std::string render_baseline(const Report& report);
// Marks the findings the baseline lists; returns how many findings are not in it.
size_t apply_baseline(Report& report, const Baseline& baseline);
// Findings not marked as baselined.
size_t new_findings(const Report& report);
// The new findings that fail the run: those of a program told apart (program_apart) count only with
// --fail-on programs (Report::programs_fatal), as do those of a dependency that only such programs load.
size_t failing_findings(const Report& report);
// Whether the findings of `lib` fail the run (baselined ones aside): not when only programs told apart load it.
bool fails_the_run(const Report& report, const LibraryReport& lib);

}  // namespace mlc
