#!/usr/bin/env python3
"""A pip torch venv, side by side with the real tools. A benchmark, not a test.

Usage: venv_bench.py MUSA_LINKCHECK VENV [RUNS] [OUTDIR]

Run by the venv's own python3 (so that its torch is the one imported). Prints, each against its peer run
alternately in the same conditions, median wall time, peak RSS (wait4's ru_maxrss) and the tool's CPU
utilisation (user + system time over wall time, every thread: 100% is one core busy):
  1. torch/lib/libtorch_cuda.so in place: default run (cold: no cache; warm), --only-named, --closure,
     against `ldd -r`;
  2. `--python` on torch/_C*.so: exit status, lines of text, warnings (the import works: no warning is the
     target), and its time against `ldd -r` on the same file; libtorch_cpu.so's default call against `ldd -r`;
  3. the whole venv in one command, as a user calls it (no flag): the first run with an empty cache
     directory, with the page cache dropped (as root) and with it warm, against `--no-cache` and an `ldd -r`
     loop over the same ELF files in the same page-cache state; then a later run (the caches of the first);
  4. the directory mode's verdict on every named file (JSON `loads`) against the real loader: a program
     (ET_EXEC, or DF_1_PIE) by `ldd -r`; any other file by a fresh interpreter of the venv that imports the
     innermost package holding it (its __init__ runs, importing torch where it does) and then loads it
     with ctypes.CDLL(path, RTLD_NOW); a disagreement is listed by file;
  5. torch's scopes as the real loader makes them: LD_DEBUG=scopes during `import torch`.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
import real_process  # noqa: E402


def measure(argv, out=subprocess.DEVNULL, env=None):
    """Wall seconds, peak RSS (MB), exit status and CPU seconds (user + system, every thread) of one command,
    from wait4."""
    start = time.monotonic()
    p = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - start, usage.ru_maxrss / 1024.0, p.returncode, usage.ru_utime + usage.ru_stime


def memory_split(argv):
    """The peaks (MB) of one command's anonymous RSS (heap, stacks: its private memory) and file-backed RSS
    (the mapped ELF files' pages: clean page cache, shared and reclaimable), sampled from /proc/PID/status
    every 10 ms."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    anon = mapped = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                fields = dict(l.split(":", 1) for l in f if ":" in l)
            anon = max(anon, int(fields.get("RssAnon", "0 kB").split()[0]))
            mapped = max(mapped, int(fields.get("RssFile", "0 kB").split()[0]))
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    return anon / 1024.0, mapped / 1024.0


def side_by_side(label, ours, peer, runs):
    to, tp, ro, rp, co = [], [], 0.0, 0.0, 0.0
    measure(ours), measure(peer)  # page cache and the tool's caches warm
    # A run keeps nothing whose witnesses changed in the last two seconds (src/literals/lookups.cpp): on a
    # machine just started, the working directory (an empty LD_LIBRARY_PATH element searches it) was made
    # a moment ago, and every run of the next two seconds would redo its run-time look-ups (19-22 ms
    # instead of 8 for libtorch_cpu on the device). A second warm run after them is what a user's next run is.
    time.sleep(2.1)
    measure(ours)
    for _ in range(runs):
        w, r, _, c = measure(ours); to.append(w); ro = max(ro, r); co += c
        w, r, _, _ = measure(peer); tp.append(w); rp = max(rp, r)
    mo, mp = statistics.median(to), statistics.median(tp)
    # CPU utilisation: the tool's CPU time over its wall time (100% is one core busy the whole run).
    print(f"{label:<34} {mo * 1000:9.1f} ms  RSS {ro:7.1f} MB  CPU {100 * co / sum(to):5.0f}% | peer {mp * 1000:9.1f} ms"
          f"  RSS {rp:6.1f} MB | ratio {mo / mp:6.3f}x", flush=True)
    return mo, mp


def main():
    tool, venv = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    outdir = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="mlc-venvbench.")
    py = os.path.join(venv, "bin", "python3")
    site = subprocess.check_output([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   text=True).strip()
    torch_lib = os.path.join(site, "torch", "lib")
    cuda = os.path.join(torch_lib, "libtorch_cuda.so")
    print(f"venv {venv}: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {runs} runs each, alternating, "
          f"median", flush=True)

    # 1. libtorch_cuda.so in place.
    ldd = ["ldd", "-r", cuda]
    cache = os.path.join(outdir, "cache")
    w, r, _, _ = measure([tool, "--cache-dir", cache, cuda])
    print(f"{'libtorch_cuda default, cold cache':<34} {w * 1000:9.1f} ms  RSS {r:7.1f} MB (one run)")
    for label, extra in (("libtorch_cuda default (warm)", []), ("libtorch_cuda --only-named", ["--only-named"]),
                         ("libtorch_cuda --closure", ["--closure"])):
        side_by_side(label, [tool, "--cache-dir", cache, *extra, cuda], ldd, runs)

    # 2. The import of torch/_C, which works.
    c_module = next(os.path.join(site, "torch", f) for f in sorted(os.listdir(os.path.join(site, "torch")))
                    if f.startswith("_C.") and f.endswith(".so"))
    with open(os.path.join(outdir, "python_C.txt"), "w") as out:
        w, r, status, _ = measure([tool, "--cache-dir", cache, f"--python={py}", c_module], out=out)
    text = open(os.path.join(outdir, "python_C.txt")).read()
    warnings = sum(1 for line in text.splitlines() if line.startswith("warning"))
    print(f"--python {os.path.basename(c_module)}: exit {status}, {len(text.splitlines())} lines, {warnings} "
          f"warnings, {w * 1000:.0f} ms, RSS {r:.1f} MB")
    print("  " + "\n  ".join(text.splitlines()[:12]))
    # The same call side by side with ldd -r on torch/_C, and libtorch_cpu's default call (issue 49's table).
    side_by_side("torch/_C --python", [tool, "--cache-dir", cache, f"--python={py}", c_module], ["ldd", "-r", c_module],
                 runs)
    cpu = os.path.join(torch_lib, "libtorch_cpu.so")
    side_by_side("libtorch_cpu default (warm)", [tool, "--cache-dir", cache, cpu], ["ldd", "-r", cpu], runs)

    # 3. The whole venv in one command, as a user calls it.
    report = os.path.join(outdir, "venv.json")
    env_run = [tool, "--format", "json", "-o", report, venv]
    measure(env_run + ["--no-cache"])
    named = [lib["path"] for lib in json.load(open(report))["libraries"] if lib["role"] == "target"]
    listing = os.path.join(outdir, "files")
    with open(listing, "w") as f:
        f.write("\n".join(named) + "\n")
    loop = ["sh", "-c", 'while IFS= read -r f; do ldd -r "$f"; done < "$1" >/dev/null 2>&1', "sh", listing]
    print(f"whole venv: {len(named)} ELF files")

    def drop_page_cache():
        try:
            subprocess.run(["sync"])
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
            return True
        except OSError:
            return False

    labels = ("musa-linkcheck VENV, empty cache", "musa-linkcheck VENV --no-cache", "ldd -r loop")

    def first_run(cold_pages):
        """One first run (an empty cache directory) and its peers, each from the same page-cache state."""
        rows = []
        for label in labels:
            if label == labels[0]:
                argv = env_run + ["--cache-dir", tempfile.mkdtemp(prefix="cache.", dir=outdir)]
            else:
                argv = env_run + ["--no-cache"] if label == labels[1] else loop
            if cold_pages and not drop_page_cache():
                return None
            if not cold_pages:
                measure(env_run + ["--no-cache"])  # the same warm pages for each: what the tool reads, read once
            rows.append(measure(argv))
        return rows

    for cold in (True, False):
        samples = [first_run(cold) for _ in range(max(1, runs // 2))]
        if samples[0] is None:
            print("page cache: cannot be dropped here (not root?)")
            continue
        print(f"first run, page cache {'dropped' if cold else 'warm'} ({len(samples)} runs, median):")
        peer = statistics.median(row[2][0] for row in samples)
        for i, label in enumerate(labels):
            t = statistics.median(row[i][0] for row in samples)
            rss = max(row[i][1] for row in samples)
            cpu = 100 * sum(row[i][3] for row in samples) / sum(row[i][0] for row in samples)
            print(f"  {label:<34} {t * 1000:9.1f} ms  RSS {rss:7.1f} MB  CPU {cpu:5.0f}% | ratio to the ldd -r loop "
                  f"{t / peer:6.3f}x", flush=True)
    cache = os.path.join(outdir, "cache-venv")
    measure(env_run + ["--cache-dir", cache])
    side_by_side("later run (caches) vs ldd -r loop", env_run + ["--cache-dir", cache], loop, max(1, runs // 2))
    # The whole venv's peak RSS, split: the private part is what the 1.5x-of-ldd -r bound is about;
    # the mapped part is the symbol tables' pages of the files read, shared with the page cache.
    anon, mapped = memory_split(env_run + ["--cache-dir", cache])
    _, ldd_rss, _, _ = measure(["ldd", "-r", cuda])
    print(f"memory, the whole venv (later run): anonymous {anon:.1f} MB ({anon / ldd_rss:.2f}x ldd -r libtorch_cuda's "
          f"{ldd_rss:.1f} MB peak), file-backed {mapped:.1f} MB (the ELF files' mapped pages)", flush=True)
    with open(os.path.join(outdir, "venv.txt"), "w") as out:
        measure([tool, "--no-cache", venv], out=out)
    text = open(os.path.join(outdir, "venv.txt")).read().splitlines()
    print(f"text report: {len(text)} lines; summary: {[l for l in text if 'files would fail' in l or 'files load' in l]}")
    print("  " + "\n  ".join(text[:40]))

    # 4. Verdicts against the real loader.
    data = json.load(open(report))
    failing = {lib["path"] for lib in data["libraries"] if lib["role"] == "target" and lib.get("loads") is False}
    # The real process, as tests/oracle/real_process.py asks it (shared with the site-packages agreement test):
    # the package's import first, an extension module's import by its dotted name, then ctypes.CDLL(RTLD_NOW);
    # a program by `ldd -r`.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}

    def oracle(path):
        _, said = real_process.oracle(path, site, py, env)  # said: "ok ..." or "fails ..."
        return path, real_process.extension(path, env), said

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        results = list(pool.map(oracle, named))
    truth = {p for p, _, v in results if not v.startswith("ok")}
    agree = sum(1 for p, _, _ in results if (p in truth) == (p in failing))
    print(f"verdicts: {agree} of {len(named)} agree with the real loader; real failures {len(truth)}, "
          f"tool's {len(failing & set(named))}; extension modules {sum(1 for _, e, _ in results if e)}")
    for p, e, v in results:
        if (p in truth) != (p in failing):
            print(f"  DISAGREE {p}: loader says {v}; tool says {'fails' if p in failing else 'loads'}"
                  f"{' (extension)' if e else ''}")
    for p, e, v in results:
        if p in truth:
            print(f"  real failure {os.path.relpath(p, venv)}: {v}")
    python_only = [p for p, _, v in results if "fails in Python" in v]
    print(f"  {len(python_only)} files whose package's import fails in Python (not the loader), checked after its "
          f"nearest importable parent")


    # 5. torch's scopes, as the real loader makes them.
    r = subprocess.run([py, "-c", "import torch"], capture_output=True, text=True, cwd="/",
                       env={**{k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}, "LD_DEBUG": "scopes"})
    added = [l.split("add ", 1)[1].split(" [")[0] for l in r.stderr.splitlines() if " to global scope" in l]
    print(f"LD_DEBUG=scopes, import torch: {len(added)} objects added to the global scope, in order:")
    for a in added:
        print(f"  {a}")
    obj, c_scope0 = "", ""
    for l in r.stderr.splitlines():
        if "object=" in l:
            obj = l.split("object=", 1)[1].split(" [")[0]
        if "scope 0:" in l and "/torch/_C." in obj and not c_scope0:
            c_scope0 = l.split("scope 0:", 1)[1].strip()
    print(f"  torch/_C's global scope: {len(c_scope0.split())} objects; libc10 in it: {'libc10' in c_scope0}; "
          f"libtorch_cpu in it: {'libtorch_cpu' in c_scope0}")


if __name__ == "__main__":
    main()
