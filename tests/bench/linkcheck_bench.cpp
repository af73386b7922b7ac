// Side-by-side benchmark (not a test): runs musa-linkcheck and its peer `ldd -r` on the same input,
// alternating, N times each, and prints the median wall times, their ratio and the peak RSS of each
// (from wait4's rusage).
//   linkcheck_bench LINKCHECK LIBRARY [RUNS] [LD_LIBRARY_PATH]   --closure and the default (the load) on
//                                                                one library vs ldd -r
//   linkcheck_bench --tree LINKCHECK DIR [RUNS]                  a whole-directory scan vs an ldd -r loop
//                                                                over the same ELF files
//   linkcheck_bench --dwarf LINKCHECK LIBRARY STRIPPED [RUNS]     the same library with and without its
//                                                                DWARF (strip --strip-debug), alternating
//   linkcheck_bench --python LINKCHECK PYTHON EXTENSION MODULE [RUNS]   musa-linkcheck --python=PYTHON on an
//                                                                extension vs `PYTHON -c "import MODULE"`
//   linkcheck_bench --coverage LINKCHECK BACKEND MAP CACHE RUNS DIR...   `coverage` cold (no cache) and
//                                                                warm (header cache) vs a grep -rlw per
//                                                                CUDA name of the map over the same dirs
// The search path reaches ldd as LD_LIBRARY_PATH and musa-linkcheck as --library-path (the same
// search path): a stale libstdc++.so.6 there must not be loaded into the C++ tool itself.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Sample {
  double seconds;
  long max_rss_kb;
  int status;
};

Sample run_once(const std::vector<std::string>& argv, const std::string& ld_library_path = "") {
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    if (!ld_library_path.empty()) setenv("LD_LIBRARY_PATH", ld_library_path.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {secs, usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// A run's standard output and error, read whole.
std::string run_capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// The files musa-linkcheck takes from a directory: ELF shared objects and executables below it,
// symlinks skipped (the file they name is listed itself).
void elf_files(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = dir + "/" + n;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (S_ISDIR(st.st_mode)) {
      elf_files(path, out);
      continue;
    }
    unsigned char h[18] = {};
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    bool elf = read(fd, h, sizeof h) == sizeof h && h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F' &&
               (h[16] == 2 || h[16] == 3);  // ET_EXEC, ET_DYN (little-endian e_type)
    close(fd);
    if (elf) out.push_back(path);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int tree_main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s --tree MUSA_LINKCHECK DIR [RUNS]\n", argv[0]);
    return 2;
  }
  std::string tool = argv[2], dir = argv[3];
  int runs = argc > 4 ? std::atoi(argv[4]) : 3;
  std::vector<std::string> files;
  elf_files(dir, files);
  if (files.empty()) {
    std::printf("benchmark skipped: no ELF files below %s\n", dir.c_str());
    return 0;
  }
  // The tool traces nothing here (no SDK, no CUDA): the loader's work only, as ldd -r does.
  std::vector<std::string> ours = {tool, "-q", "--cuda-home", "", "--sdk-home", "", dir};
  std::string loop = "for f in \"$@\"; do ldd -r \"$f\"; done";
  std::vector<std::string> peer = {"sh", "-c", loop, "sh"};
  peer.insert(peer.end(), files.begin(), files.end());
  run_once(ours);
  run_once(peer);
  std::vector<double> t_ours, t_peer;
  long rss_ours = 0, rss_peer = 0;
  for (int i = 0; i < runs; ++i) {
    Sample a = run_once(ours), b = run_once(peer);
    t_ours.push_back(a.seconds);
    t_peer.push_back(b.seconds);
    rss_ours = std::max(rss_ours, a.max_rss_kb);
    rss_peer = std::max(rss_peer, b.max_rss_kb);
  }
  double mo = median(t_ours), mp = median(t_peer);
  std::printf("tree: %s, %zu ELF files (%d runs each, alternating)\n", dir.c_str(), files.size(), runs);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB\n", "musa-linkcheck DIR", mo * 1e3, rss_ours / 1024.0);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB\n", "ldd -r, once per file", mp * 1e3, rss_peer / 1024.0);
  std::printf("ratio (ldd -r loop / musa-linkcheck): %.1fx faster\n", mp / mo);
  return 0;
}

// What reading DWARF costs: musa-linkcheck on a library and on its copy stripped of debug information,
// side by side. The DWARF run must locate references (file:line), else it measured nothing.
int dwarf_main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s --dwarf MUSA_LINKCHECK LIBRARY STRIPPED_LIBRARY [RUNS]\n", argv[0]);
    return 2;
  }
  std::string tool = argv[2], lib = argv[3], stripped = argv[4];
  int runs = argc > 5 ? std::atoi(argv[5]) : 5;
  auto args = [&](const std::string& file) {
    return std::vector<std::string>{tool, "--cuda-home", "", "--sdk-home", "", file};
  };
  // One run with its report read: the references must carry a source line.
  int located = 0;
  {
    std::string report = run_capture(args(lib));
    for (size_t at = report.find("referenced by "); at != std::string::npos;
         at = report.find("referenced by ", at + 1)) {
      size_t eol = report.find('\n', at);
      std::string line = report.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
      size_t colon = line.find(".cpp:");
      located += colon != std::string::npos && colon + 5 < line.size() && std::isdigit(line[colon + 5]);
    }
  }
  run_once(args(lib));  // warm the page cache for both, equally
  run_once(args(stripped));
  std::vector<double> t_dwarf, t_plain;
  long rss_dwarf = 0, rss_plain = 0;
  int status_dwarf = 0, status_plain = 0;
  for (int i = 0; i < runs; ++i) {
    Sample a = run_once(args(lib)), b = run_once(args(stripped));
    t_dwarf.push_back(a.seconds);
    t_plain.push_back(b.seconds);
    rss_dwarf = std::max(rss_dwarf, a.max_rss_kb);
    rss_plain = std::max(rss_plain, b.max_rss_kb);
    status_dwarf = a.status;
    status_plain = b.status;
  }
  double md = median(t_dwarf), mp = median(t_plain);
  std::printf("DWARF cost: %s (%d runs each, alternating), %d references located by file:line\n", lib.c_str(), runs,
              located);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "with DWARF", md * 1e3, rss_dwarf / 1024.0,
              status_dwarf);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "stripped (--strip-debug)", mp * 1e3,
              rss_plain / 1024.0, status_plain);
  std::printf("ratio (with DWARF / stripped): %.2fx wall time (target: within 2x)\n", md / mp);
  return located > 0 ? 0 : 1;
}

// --python on an extension against the import it predicts: the peer really imports
// the package (torch and all), which is what a user would otherwise run to find out.
int python_main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s --python MUSA_LINKCHECK PYTHON EXTENSION MODULE [RUNS]\n", argv[0]);
    return 2;
  }
  std::string tool = argv[2], python = argv[3], ext = argv[4], module = argv[5];
  int runs = argc > 6 ? std::atoi(argv[6]) : 5;
  if (access(ext.c_str(), R_OK) != 0 || access(python.c_str(), X_OK) != 0) {
    std::printf("benchmark skipped: %s or %s is absent (apt-get install python3-torchvision)\n", ext.c_str(),
                python.c_str());
    return 0;
  }
  std::vector<std::string> ours = {tool, "-q", "--python=" + python, ext};
  std::vector<std::string> peer = {python, "-c", "import " + module};
  run_once(ours);  // warm the page cache for both, equally
  run_once(peer);
  std::vector<double> t_ours, t_peer;
  long rss_ours = 0, rss_peer = 0;
  int status_ours = 0, status_peer = 0;
  for (int i = 0; i < runs; ++i) {
    Sample a = run_once(ours), b = run_once(peer);
    t_ours.push_back(a.seconds);
    t_peer.push_back(b.seconds);
    rss_ours = std::max(rss_ours, a.max_rss_kb);
    rss_peer = std::max(rss_peer, b.max_rss_kb);
    status_ours = a.status;
    status_peer = b.status;
  }
  double mo = median(t_ours), mp = median(t_peer);
  std::printf("extension: %s (%d runs each, alternating)\n", ext.c_str(), runs);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "musa-linkcheck --python", mo * 1e3,
              rss_ours / 1024.0, status_ours);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", ("python -c 'import " + module + "'").c_str(),
              mp * 1e3, rss_peer / 1024.0, status_peer);
  std::printf("ratio (musa-linkcheck --python / import): %.2fx wall time\n", mo / mp);
  return 0;
}

// The porting-coverage report against what a person does without it: one grep over the tree per CUDA
// name the map knows (and that only finds the uses; the SDK is not even consulted).
int coverage_main(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr, "usage: %s --coverage MUSA_LINKCHECK BACKEND MAP CACHE_DIR RUNS DIR...\n", argv[0]);
    return 2;
  }
  std::string tool = argv[2], backend = argv[3], map = argv[4], cache = argv[5];
  int runs = std::max(1, std::atoi(argv[6]));
  std::vector<std::string> dirs(argv + 7, argv + argc);
  struct stat st;
  if (stat(map.c_str(), &st) != 0 || stat(dirs.front().c_str(), &st) != 0) {
    std::printf("coverage benchmark skipped: %s or %s is missing (bash tools/dev.sh bench fetches PyTorch's sources)\n",
                map.c_str(), dirs.front().c_str());
    return 0;
  }
  std::vector<std::string> cold = {tool, "coverage",   "--backend", backend, "--mapping",
                                   map,  "--no-cache", "--format",  "json"};
  std::vector<std::string> warm = {tool, "coverage",    "--backend", backend,    "--mapping",
                                   map,  "--cache-dir", cache,       "--format", "json"};
  cold.insert(cold.end(), dirs.begin(), dirs.end());
  warm.insert(warm.end(), dirs.begin(), dirs.end());
  // The CUDA names the map quotes (cu*, CU*, nv*), each grepped for as a word over the same trees.
  std::string loop =
      "grep -oE '\"(cu|CU|nv)[A-Za-z0-9_]*\"' \"$1\" | tr -d '\"' | sort -u | { shift; n=0; "
      "while read -r name; do grep -rlw -- \"$name\" \"$@\" >/dev/null; n=$((n+1)); done; }";
  std::vector<std::string> peer = {"sh", "-c", loop, "sh", map};
  peer.insert(peer.end(), dirs.begin(), dirs.end());
  std::string names =
      run_capture({"sh", "-c", "grep -oE '\"(cu|CU|nv)[A-Za-z0-9_]*\"' \"$1\" | sort -u | wc -l", "sh", map});
  run_once(warm);  // fills the cache
  std::vector<double> t_cold, t_warm, t_peer;
  long rss_cold = 0, rss_warm = 0, rss_peer = 0;
  for (int i = 0; i < runs; ++i) {
    Sample c = run_once(cold), w = run_once(warm);
    t_cold.push_back(c.seconds);
    t_warm.push_back(w.seconds);
    rss_cold = std::max(rss_cold, c.max_rss_kb);
    rss_warm = std::max(rss_warm, w.max_rss_kb);
  }
  Sample g = run_once(peer);  // one run: it takes a minute
  t_peer.push_back(g.seconds);
  rss_peer = g.max_rss_kb;
  double mc = median(t_cold), mw = median(t_warm), mg = median(t_peer);
  std::printf("coverage: backend %s, map %s, %zu dirs, %d runs each (the grep loop once), %s CUDA names in the map\n",
              backend.c_str(), map.c_str(), dirs.size(), runs,
              names.empty() ? "?" : names.substr(0, names.find('\n')).c_str());
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB\n", "coverage, cold (--no-cache)", mc * 1e3, rss_cold / 1024.0);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB\n", "coverage, warm (header cache)", mw * 1e3,
              rss_warm / 1024.0);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB\n", "grep -rlw per CUDA name", mg * 1e3, rss_peer / 1024.0);
  std::printf("ratio (grep loop / coverage): %.0fx faster cold, %.0fx warm\n", mg / mc, mg / mw);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--python") return python_main(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "--coverage") return coverage_main(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "--tree") return tree_main(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "--dwarf") return dwarf_main(argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MUSA_LINKCHECK LIBRARY [RUNS] [LD_LIBRARY_PATH]\n", argv[0]);
    return 2;
  }
  std::string tool = argv[1], lib = argv[2];
  int runs = argc > 3 ? std::atoi(argv[3]) : 7;
  std::string search_path = argc > 4 ? argv[4] : "";
  if (access(lib.c_str(), R_OK) != 0) {
    std::printf("benchmark skipped: %s is absent (apt-get install libtorch1.13)\n", lib.c_str());
    return 0;
  }
  std::vector<std::string> ours = {tool, "--closure", "-q", lib};
  if (!search_path.empty()) ours.insert(ours.begin() + 1, {"--library-path", search_path});
  // The default: what loading the library binds (here the same objects as the closure).
  std::vector<std::string> load = {tool, "-q", lib};
  if (!search_path.empty()) load.insert(load.begin() + 1, {"--library-path", search_path});
  std::vector<std::string> peer = {"ldd", "-r", lib};
  run_once(ours);  // warm the page cache for all, equally
  run_once(load);
  run_once(peer, search_path);
  std::vector<double> t_ours, t_load, t_peer;
  long rss_ours = 0, rss_load = 0, rss_peer = 0;
  int status_ours = 0, status_load = 0, status_peer = 0;
  for (int i = 0; i < runs; ++i) {
    Sample a = run_once(ours), c = run_once(load), b = run_once(peer, search_path);
    t_ours.push_back(a.seconds);
    t_load.push_back(c.seconds);
    t_peer.push_back(b.seconds);
    rss_ours = std::max(rss_ours, a.max_rss_kb);
    rss_load = std::max(rss_load, c.max_rss_kb);
    rss_peer = std::max(rss_peer, b.max_rss_kb);
    status_ours = a.status;
    status_load = c.status;
    status_peer = b.status;
  }
  double mo = median(t_ours), ml = median(t_load), mp = median(t_peer);
  std::printf("library: %s (%d runs each, alternating)%s%s\n", lib.c_str(), runs,
              search_path.empty() ? "" : ", search path first: ", search_path.c_str());
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "musa-linkcheck --closure", mo * 1e3,
              rss_ours / 1024.0, status_ours);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "musa-linkcheck (default: the load)", ml * 1e3,
              rss_load / 1024.0, status_load);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "ldd -r", mp * 1e3, rss_peer / 1024.0,
              status_peer);
  std::printf("ratio (musa-linkcheck / ldd -r): %.2fx wall time (--closure), %.2fx (default)\n", mo / mp, ml / mp);
  return 0;
}
