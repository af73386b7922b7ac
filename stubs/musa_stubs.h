/* The stub runtime: every stub musa-stubgen writes calls musa_stub_enter() (or musa_stub_abort())
 * first, so a run can say which stubs real code reached. Usable from C and C++.
 *
 * Two ways to use it: link the static library MusaLinkcheck::stubs (stubs/musa_stubs.c), or - as
 * musa-stubgen's output does - define MUSA_STUBS_IMPLEMENTATION before including this header in one
 * translation unit, which bundles a private copy into that library. */
#ifndef MUSA_STUBS_H_
#define MUSA_STUBS_H_

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MUSA_STUBS_IMPLEMENTATION) && !defined(MUSA_STUBS_LIBRARY)
#define MUSA_STUBS_API static __attribute__((unused)) /* bundled: private to the library */
#else
#define MUSA_STUBS_API
#endif

enum musa_stub_action {
  MUSA_STUB_THROW = 0, /* the caller raises its error (C10_THROW_ERROR or a standard exception) */
  MUSA_STUB_WARN = 1   /* the caller returns its "not supported" value and carries on */
};

/* Records the hit - with MUSA_STUBS_TRACE=FILE each stub is appended to FILE once per process, as
 * "<mangled>\t<demangled>" - and applies the policy in MUSA_STUBS: "throw" (default: returns
 * MUSA_STUB_THROW), "warn" (prints once to stderr, returns MUSA_STUB_WARN) or "abort" (prints and
 * aborts). Thread-safe. */
MUSA_STUBS_API int musa_stub_enter(const char* demangled, const char* mangled);

/* Records the hit, prints "<demangled> is not supported now!" and aborts. Allocates nothing. */
MUSA_STUBS_API __attribute__((noreturn)) void musa_stub_abort(const char* demangled, const char* mangled);

#ifdef MUSA_STUBS_IMPLEMENTATION
/* No allocation anywhere: messages go out with write(2) from fixed buffers; the "already seen"
 * sets are fixed open-addressing tables of name pointers updated with atomic builtins (valid C and
 * C++), so this is safe from any thread and on the abort path. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MUSA_STUBS_SLOTS 4096

static uintptr_t musa_stubs_traced[MUSA_STUBS_SLOTS];
static uintptr_t musa_stubs_warned[MUSA_STUBS_SLOTS];

/* Inserts the key; 1 when it was not there yet. Keys are the mangled-name literals, whose addresses
 * are distinct per stub. A full table answers "new": a repeated line beats a lost one. */
static int musa_stubs_first_time(uintptr_t* table, const char* key) {
  uintptr_t k = (uintptr_t)key;
  size_t h = (size_t)(k >> 3) * 2654435761u;
  for (size_t i = 0; i < MUSA_STUBS_SLOTS; ++i) {
    uintptr_t* slot = &table[(h + i) % MUSA_STUBS_SLOTS];
    uintptr_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (cur == k) return 0;
    if (cur == 0) {
      uintptr_t expected = 0;
      if (__atomic_compare_exchange_n(slot, &expected, k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
      if (expected == k) return 0;
    }
  }
  return 1;
}

/* Appends s to buf (capacity cap, NUL-terminated), truncating. */
static size_t musa_stubs_append(char* buf, size_t n, size_t cap, const char* s) {
  size_t len = strlen(s);
  if (len > cap - 1 - n) len = cap - 1 - n;
  memcpy(buf + n, s, len);
  buf[n + len] = '\0';
  return n + len;
}

/* One line per stub, written with a single write(2) so concurrent appends do not interleave. */
static void musa_stubs_trace(const char* demangled, const char* mangled) {
  const char* file = getenv("MUSA_STUBS_TRACE");
  if (!file || !*file || !musa_stubs_first_time(musa_stubs_traced, mangled)) return;
  char line[1024];
  size_t n = 0;
  const char* parts[3] = {mangled, "\t", demangled};
  for (size_t p = 0; p < 3; ++p) {
    size_t len = strlen(parts[p]);
    if (len > sizeof line - 2 - n) len = sizeof line - 2 - n;
    memcpy(line + n, parts[p], len);
    n += len;
  }
  line[n++] = '\n';
  int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, n);
  (void)ignored;
  close(fd);
}

/* The whole message in one write(2): concurrent stubs never interleave their lines. */
static void musa_stubs_say(const char* what, const char* demangled) {
  char line[1024];
  size_t n = 0;
  n = musa_stubs_append(line, n, sizeof line - 1, "musa-stubs: ");
  n = musa_stubs_append(line, n, sizeof line - 1, what);
  n = musa_stubs_append(line, n, sizeof line - 1, demangled);
  n = musa_stubs_append(line, n, sizeof line - 1, " is not supported now!");
  line[n++] = '\n';
  ssize_t ignored = write(2, line, n);
  (void)ignored;
}

MUSA_STUBS_API void musa_stub_abort(const char* demangled, const char* mangled) {
  musa_stubs_trace(demangled, mangled);
  musa_stubs_say("aborting: ", demangled);
  abort();
}

MUSA_STUBS_API int musa_stub_enter(const char* demangled, const char* mangled) {
  musa_stubs_trace(demangled, mangled);
  const char* policy = getenv("MUSA_STUBS");
  if (policy && strcmp(policy, "abort") == 0) musa_stub_abort(demangled, mangled);
  if (policy && strcmp(policy, "warn") == 0) {
    if (musa_stubs_first_time(musa_stubs_warned, mangled)) musa_stubs_say("warning: ", demangled);
    return MUSA_STUB_WARN;
  }
  return MUSA_STUB_THROW;
}
#endif /* MUSA_STUBS_IMPLEMENTATION */

#ifdef __cplusplus
}
#endif

#endif /* MUSA_STUBS_H_ */
