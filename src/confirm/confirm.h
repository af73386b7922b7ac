// Confirmation by the real compiler (--confirm): candidate sources that text matching could not
// settle are compiled with the build's own command (or a sibling's), and the object's .symtab says
// which file really defines a symbol. Results are cached by file content + command.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "build/command_line.h"
#include "build/model.h"
#include "loader/loader.h"
#include "report/report.h"
#include "report/said.h"
#include "trace/trace.h"

namespace mlc::confirm {

struct ConfirmOptions {
  std::string build_dir;  // where compile_commands.json lives
  std::string cache_dir;  // results cache and scratch objects ("" : a private dir under build_dir)
  // The compiler work allowed: this many compiler runs, the best-ranked candidates first (what the
  // cache answers is free); what it leaves out stays unconfirmed. A count, not a clock, so that the
  // same input gets the same answer on a loaded machine as on an idle one.
  size_t budget_compiles = 60;
  unsigned jobs = 0;  // parallel compiles (0: one per core)
  // Every candidate's failed compile said, with the compiler's error; by default only those of the
  // symbols no candidate settled (a candidate that does not compile is simply not the answer).
  bool verbose = false;
  double compile_timeout_seconds = 600;  // one compile running longer is a hung compiler: killed, left unconfirmed
};

// What compiling one file showed.
struct FileResult {
  std::string file;
  std::string command_from;  // the file whose build command was used (itself or a sibling)
  bool ok = false;           // compiled (now or in an earlier run)
  bool from_cache = false;
  bool skipped = false;                // no command, or the budget ran out
  std::vector<std::string> defined;    // global/weak symbols the object defines, sorted
  std::vector<std::string> undefined;  // strong global symbols it references and does not define, sorted
  std::string warning;                 // why it did not compile, one line
};

struct ConfirmStats {
  size_t files = 0;
  size_t settled = 0;     // symbols the compiler placed (confirm_symbols)
  size_t compiled = 0;    // compiler runs this time
  size_t cached = 0;      // answered from the cache
  size_t failed = 0;      // compiler ran and failed, hung, or is missing
  size_t skipped = 0;     // cut off by the budget or without any command
  double compile_ms = 0;  // wall time spent compiling
};

struct ConfirmOutcome {
  std::map<std::string, FileResult> files;
  ConfirmStats stats;
  std::vector<Warning> warnings;              // why nothing could be compiled
  std::vector<said::CompileFailed> failures;  // the compiles that failed, in file order
};

// The build's compile commands come from the build model (buildmodel/model.h).
using build::CompileCommand;
using build::read_compile_commands;

// The command that compiles `file` into `object`: the build's own, else its nearest sibling's (same
// directory and extension first) with the file substituted. `from` names the file whose command it was.
// Response files are read inline, depfile flags dropped and the output redirected to `object`, nvcc's
// spellings included. A CUDA source (.cu) whose command is a host compiler's gets `cuda_compiler` (the
// build's CMAKE_CUDA_COMPILER or FindCUDA's CUDA_NVCC_EXECUTABLE), with the host flags passed as CMake's
// CUDA rules pass them; without one it has no command (false).
bool command_for(const std::vector<CompileCommand>& db, const std::string& file, const std::string& object,
                 CompileCommand& out, std::string& from, const std::string& cuda_compiler = "");
// True for nvcc (by the driver's file name: buildmodel/command_line.h), and for a source CUDA's compiler
// takes (.cu).
using build::is_nvcc;
bool is_cuda_source(const std::string& file);

ConfirmOutcome confirm_files(const std::vector<std::string>& files, const ConfirmOptions& options);

// An uncompiled source that could define a symbol text matching could not place, and why it is a
// candidate. Tiers, best first: 1 it includes (or is) the header declaring the symbol, its class or
// its template; 2 it is in the directories of the referencing target (or of those headers) and spells
// the symbol's name; 3 any other uncompiled source there.
struct RankedSource {
  std::string file;
  int tier = 3;
  uint32_t line = 0;              // where it includes the header or spells the name (0: unknown)
  said::CandidateBasis evidence;  // why it is a candidate (it includes /src/a.h)
  int place = 2;                  // candidate_place: where it lies, which orders the tiers
};

// Where a candidate lies, the first rank of the confirm pass's order (the tier comes second): 0 in a
// directory of the target referencing the symbol, 1 among another target's sources (or beside a
// declaring header), 2 elsewhere, 3 a test, benchmark, example or another platform's file (*_test.*,
// win/, os390...), which a library rarely forgets.
int candidate_place(const trace::TraceContext& ctx, const UnresolvedSymbol& u, const std::string& file);
// Ranked candidates for `u` (files read for their text are kept in `texts` across calls).
std::vector<RankedSource> rank_sources(const trace::TraceContext& ctx, const UnresolvedSymbol& u,
                                       std::map<std::string, std::string>& texts);
// The 1-based line of the first whole-word occurrence of `word` in `text` (0: none).
uint32_t line_mentioning(const std::string& text, const std::string& word);

// The pass: picks the unsettled symbols among `symbols` (unknown, declaration-only, or defined in
// several uncompiled sources), compiles their candidate files and restates the classification of
// those the compiler settles. The candidates are first the uncompiled sources text matching names;
// for what they leave unsettled, the ranked sources of rank_sources, by place then tier, while the
// budget lasts. Warnings (failed compiles, budget) and the summary of what was compiled go to `warnings`.
ConfirmStats confirm_symbols(const trace::TraceContext& ctx, const std::vector<UnresolvedSymbol*>& symbols,
                             const ConfirmOptions& options, std::vector<Warning>& warnings);

// What a patch would leave, of the `total` traced symbols. Resolved by proof: a planned stub
// (`stubbed`, mangled names) or the object of a planned add-source file (compiled now, or answered
// from the cache) defines it. `by_text`: a planned add-source file whose text defines it could not be
// compiled here (its compile failed, or was skipped): only the rebuild will tell, so it is counted
// neither as resolved nor as still unresolved. `still`: what the patch leaves for certain.
struct AfterPatch {
  size_t still = 0, total = 0, by_text = 0;
  ConfirmStats stats;
};
// `unreached` (mangled) are symbols whose source is listed already where the build does not compile
// it from: whatever their objects define, the patch leaves them.
AfterPatch after_patch(const Report& report, const std::vector<std::string>& stubbed,
                       const std::vector<std::string>& unreached, const ConfirmOptions& options,
                       std::vector<Warning>& warnings);

// The sources a patch gives back may reference symbols that other sources the build leaves out define
// (snappy.cc needs snappy-sinksource.cc, which nothing else referenced): compiles the add-source files
// of `report`, traces what their objects reference that neither an object of `process` (the library
// and what it loads, when given) nor another given-back object defines, and adds those that are
// missing-source to the report (with a fix aimed at `target`), until no new file comes back. Returns
// how many symbols it added.
size_t close_over_sources(Report& report, const trace::TraceContext& ctx, const loader::Process* process,
                          const std::string& target, const ConfirmOptions& options, std::vector<Warning>& warnings);

}  // namespace mlc::confirm
