#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace mlc {
namespace {

// The child's side: never returns. A failure to enter the directory or to exec is written to
// `report` (the parent reads errno from it) before the exit.
[[noreturn]] void exec_child(const ProgramRun& run, char* const* args, const int out[2], const int err[2], int report) {
  setpgid(0, 0);  // a group of its own: a time-out ends it and whatever it started, nothing else
  dup2(out[1], 1);
  dup2(run.merge_output ? out[1] : err[1], 2);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  int status = 126;
  if (run.directory.empty() || chdir(run.directory.c_str()) == 0) {
    execvp(args[0], args);
    status = 127;
  }
  int e = errno;
  ssize_t ignored = write(report, &e, sizeof e);
  (void)ignored;
  _exit(status);
}

// Reads both pipes until they close or the deadline passes (then kills the group).
void read_until_closed(pid_t pid, const ProgramRun& run, int out_fd, int err_fd, ProgramResult& r) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(run.deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      kill(-pid, SIGKILL);  // the process group: a shim's or a script's children too
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
}

}  // namespace

ProgramResult run_program(const ProgramRun& run) {
  ProgramResult r;
  if (run.argv.empty()) return r;
  int out[2], err[2], report[2];
  if (pipe2(out, O_CLOEXEC) != 0) return r;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]);
    return r;
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(out[0]), close(out[1]), close(err[0]), close(err[1]);
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : run.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) exec_child(run, args.data(), out, err, report[1]);
  close(out[1]);
  close(err[1]);
  close(report[1]);
  if (pid < 0) {
    close(out[0]), close(err[0]), close(report[0]);
    return r;
  }
  setpgid(pid, pid);  // also from here, so that the group exists before any kill below
  r.started = true;
  read_until_closed(pid, run, out[0], err[0], r);
  waitpid(pid, &r.status, 0);
  if (r.timed_out) kill(-pid, SIGKILL);  // anything of the group started after the first kill
  int e = 0;
  if (read(report[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e)) r.exec_errno = e;
  close(report[0]);
  return r;
}

}  // namespace mlc
