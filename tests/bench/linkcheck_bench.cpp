// Side-by-side benchmark (not a test): runs musa-linkcheck --closure and its peer `ldd -r` on the
// same library, alternating, N times each, and prints the median wall times, their ratio and the
// peak RSS of each (from wait4's rusage). Usage: linkcheck_bench LINKCHECK LIBRARY [RUNS] [LD_LIBRARY_PATH]
// The search path reaches ldd as LD_LIBRARY_PATH and musa-linkcheck as --library-path (the same
// search path): a stale libstdc++.so.6 there must not be loaded into the C++ tool itself.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
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
  std::vector<std::string> peer = {"ldd", "-r", lib};
  run_once(ours);  // warm the page cache for both, equally
  run_once(peer, search_path);
  std::vector<double> t_ours, t_peer;
  long rss_ours = 0, rss_peer = 0;
  int status_ours = 0, status_peer = 0;
  for (int i = 0; i < runs; ++i) {
    Sample a = run_once(ours), b = run_once(peer, search_path);
    t_ours.push_back(a.seconds);
    t_peer.push_back(b.seconds);
    rss_ours = std::max(rss_ours, a.max_rss_kb);
    rss_peer = std::max(rss_peer, b.max_rss_kb);
    status_ours = a.status;
    status_peer = b.status;
  }
  double mo = median(t_ours), mp = median(t_peer);
  std::printf("library: %s (%d runs each, alternating)%s%s\n", lib.c_str(), runs,
              search_path.empty() ? "" : ", search path first: ", search_path.c_str());
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "musa-linkcheck --closure", mo * 1e3,
              rss_ours / 1024.0, status_ours);
  std::printf("%-34s median %8.1f ms  peak RSS %7.1f MB  exit %d\n", "ldd -r", mp * 1e3, rss_peer / 1024.0, status_peer);
  std::printf("ratio (musa-linkcheck / ldd -r): %.2fx wall time\n", mo / mp);
  return 0;
}
