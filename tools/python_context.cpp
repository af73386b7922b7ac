// Subprocesses for --python and wheels: the interpreter asked, a wheel unpacked (common/subprocess.h runs them).
#include "python_context.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/phase_times.h"
#include "common/subprocess.h"
#include "python/query.h"

namespace mlc::tools {
namespace {

// A program's run, with the time limit it had (for the message).
struct Ran : ProgramResult {
  int limit = 0;  // seconds
};

Ran run_program(const std::vector<std::string>& argv, int timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  Ran r{mlc::run_program({.argv = argv, .deadline = deadline})};
  r.limit = timeout_seconds;
  return r;
}

// --python's question is find_spec only, answered in well under a second: 60 s unless
// MUSA_LINKCHECK_PYTHON_TIMEOUT says how many seconds (docs/user-guide.md).
int python_time_limit() {
  const char* v = std::getenv("MUSA_LINKCHECK_PYTHON_TIMEOUT");
  if (!v || !*v) return 60;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end == '\0' && n > 0 && n <= 86400 ? static_cast<int>(n) : 60;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// What went wrong with a program that did not answer, in one line.
std::optional<std::string> failure(const Ran& r) {
  if (!r.started) return "cannot start a process";
  if (r.exec_errno) return std::string("cannot run: ") + std::strerror(r.exec_errno);
  if (r.timed_out) return "did not answer within " + std::to_string(r.limit) + " s (it and its children were killed)";
  if (WIFSIGNALED(r.status)) return "crashed (" + std::string(strsignal(WTERMSIG(r.status))) + ")";
  if (WEXITSTATUS(r.status) != 0) {
    std::string why = last_line(r.err);
    return "exited with status " + std::to_string(WEXITSTATUS(r.status)) + (why.empty() ? "" : ": " + why);
  }
  return std::nullopt;
}

}  // namespace

std::optional<InputError> ask_python(const std::string& interpreter, const std::string& resolved,
                                     LinkcheckOptions& options) {
  PhaseTime t("python.ask");
  const std::string program = python::query_program(python::context_packages(options.trace.backend));
  // The answer an earlier run got, while nothing it depends on changed (python/kept_answers.cpp).
  const std::string question = python::answer_question(resolved.empty() ? interpreter : resolved, program);
  std::optional<std::string> answer = python::kept_answer(options.trace.cache_dir, question);
  if (!answer) {
    PhaseTime asked("python.run");
    Ran r = run_program({interpreter, "-c", program}, python_time_limit());
    if (auto why = failure(r)) return InputError{interpreter, "the Python interpreter " + *why};
    answer = r.out;
    if (!resolved.empty()) python::keep_answer(options.trace.cache_dir, question, resolved, r.out);
  }
  auto env = python::parse_answer(interpreter, *answer);
  if (!env) return env.error();
  options.host_python = env->executable;
  options.python = std::move(env).value();
  return std::nullopt;
}

bool is_wheel(const std::string& path) {
  struct stat st;
  return path.size() > 4 && path.ends_with(".whl") && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Result<std::string> UnpackedWheels::unpack(const std::string& wheel, const std::string& python,
                                           const std::string& parent) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string templ = parent + "/wheel-XXXXXX";
  if (!mkdtemp(templ.data())) return InputError{wheel, "cannot make a directory to unpack it in " + parent};
  dirs_.emplace_back(wheel, templ);
  // Members are unpacked as names only: zipfile refuses absolute paths and "..".
  Ran r = run_program({python, "-c",
                       "import sys, zipfile\n"
                       "with zipfile.ZipFile(sys.argv[1]) as z:\n"
                       "    bad = z.testzip()\n"
                       "    if bad: sys.exit('corrupt member ' + bad)\n"
                       "    z.extractall(sys.argv[2])\n",
                       wheel, templ},
                      300);
  if (auto why = failure(r)) {
    if (r.exec_errno || !r.started) return InputError{wheel, "cannot unpack the wheel: " + python + " " + *why};
    std::string detail = last_line(r.err);
    return InputError{wheel, "not a readable wheel (zip archive)" + (detail.empty() ? "" : ": " + detail)};
  }
  return templ;
}

UnpackedWheels::~UnpackedWheels() {
  std::error_code ec;
  for (const auto& [wheel, dir] : dirs_) std::filesystem::remove_all(dir, ec);
}

void UnpackedWheels::rename_paths(Report& report) const {
  auto fix = [&](std::string& p) {
    for (const auto& [wheel, dir] : dirs_)
      if (p.rfind(dir + "/", 0) == 0) p = wheel + "!" + p.substr(dir.size());
  };
  for (auto& lib : report.libraries) {
    fix(lib.path);
    for (auto& n : lib.needed) {
      if (n.path) fix(*n.path);
      for (auto& s : n.searched) fix(s);
      for (auto& s : n.search) fix(s.path);
    }
    for (auto& v : lib.missing_versions)
      if (v.provider) fix(*v.provider);
    for (auto& u : lib.unresolved)
      for (auto& r : u.referenced_by) fix(r.library);
  }
  for (auto& r : report.runtime_lookups) {
    fix(r.library);
    if (r.provider) fix(*r.provider);
  }
  for (auto& e : report.errors) fix(e.path);
}

}  // namespace mlc::tools
