#!/usr/bin/env python3
"""Mutation testing as a habit: plant each bug of mutants.json, rebuild, run the tests that claim to
cover it, and say whether they noticed. A mutant the tests do not kill names a rule no test checks.

Run from the repository root, on a build tree configured with MLC_BUILD_TESTS=ON:
    python3 tests/mutation/run.py [--build DIR] [--only ID ...] [--list] [--check-list]
Each file is restored byte for byte after its mutant (also on Ctrl-C or an error); the script refuses
to start when a file it would mutate has uncommitted changes, so a person's edits are never lost.
Standard library only."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIST = Path(__file__).resolve().parent / "mutants.json"
FIELDS = ("id", "room", "file", "find", "replace", "bug", "targets", "tests")
ROOMS = ("loader", "build-edits", "resolver", "placement", "process-model", "outputs")
TOOLS = ["tools/musa-linkcheck", "tools/musa-stubgen"]


def text(value):
    # A find or replace text is a string, or a list of lines (easier to read for several lines).
    return "\n".join(value) if isinstance(value, list) else value


def load_mutants():
    with open(LIST, encoding="utf-8") as f:
        mutants = json.load(f)["mutants"]
    problems = []
    seen = set()
    for m in mutants:
        missing = [k for k in FIELDS if k not in m]
        if missing:
            problems.append(f"{m.get('id', '?')}: missing {', '.join(missing)}")
            continue
        m["find"], m["replace"] = text(m["find"]), text(m["replace"])
        if m["id"] in seen:
            problems.append(f"{m['id']}: id used twice")
        seen.add(m["id"])
        if m["room"] not in ROOMS:
            problems.append(f"{m['id']}: room {m['room']!r} is none of {', '.join(ROOMS)}")
        if m["find"] == m["replace"]:
            problems.append(f"{m['id']}: replace is the find text (no bug planted)")
        if not m["targets"] or not m["tests"]:
            problems.append(f"{m['id']}: names no test target or no test regex")
    return mutants, problems


def stale_reason(m):
    # The find text must occur exactly once, or the mutant no longer says where its bug goes.
    path = ROOT / m["file"]
    if not path.is_file():
        return f"{m['file']} does not exist"
    count = path.read_bytes().decode("utf-8").count(m["find"])
    return None if count == 1 else f"find text occurs {count} times in {m['file']}, not once"


def check_list(mutants, problems):
    for m in mutants:
        if "find" in m and isinstance(m["find"], str):
            reason = stale_reason(m)
            if reason:
                problems.append(f"{m['id']}: stale: {reason}")
    for p in problems:
        print(p)
    print(f"{len(mutants)} mutants, {len(problems)} problems")
    return 1 if problems else 0


def dirty_files(files):
    out = subprocess.run(["git", "status", "--porcelain", "--"] + sorted(files), cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line[3:] for line in out.splitlines() if line.strip()]


def run(cmd, log):
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    return subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT).returncode


def build(build_dir, targets, log):
    return run(["ninja", "-C", str(build_dir)] + TOOLS + list(targets), log)


def failed_tests(log_path):
    # ctest's own summary lines name the failed tests: "  12 - Suite.name (Failed)".
    names = []
    collecting = False
    for line in log_path.read_text(errors="replace").splitlines():
        if line.startswith("The following tests FAILED:"):
            collecting = True
        elif collecting and " - " in line:
            names.append(line.split(" - ", 1)[1].split(" (")[0].strip())
        elif collecting and line.strip() and not line.startswith("\t"):
            collecting = False
    return names


def try_mutant(m, build_dir, log_dir):
    """Plants m, rebuilds, runs its tests; returns (outcome, detail). The file is restored whatever happens."""
    path = ROOT / m["file"]
    original = path.read_bytes()
    log_path = log_dir / f"{m['id']}.log"
    with open(log_path, "w", encoding="utf-8") as log:
        source = original.decode("utf-8")
        if source.count(m["find"]) != 1:
            return "stale", stale_reason(m)
        try:
            path.write_bytes(source.replace(m["find"], m["replace"], 1).encode("utf-8"))
            if build(build_dir, m["targets"], log) != 0:
                return "killed", "by the compiler"
            rc = run(["ctest", "--test-dir", str(build_dir), "-R", m["tests"], "--no-tests=error",
                      "--output-on-failure"], log)
        finally:
            path.write_bytes(original)
    failed = [t for t in failed_tests(log_path) if not t.startswith("test_scratch")]
    if rc == 0:
        return "survived", ""
    if not failed:
        return "error", f"ctest failed without a failed test (see {log_path})"
    return "killed", ", ".join(failed[:3]) + (f" and {len(failed) - 3} more" if len(failed) > 3 else "")


def main():
    ap = argparse.ArgumentParser(description="Plant the bugs of tests/mutation/mutants.json and run their tests.")
    ap.add_argument("--build", default="build", help="the build tree (default: build)")
    ap.add_argument("--only", action="append", default=[], metavar="ID", help="run only this mutant (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check-list", action="store_true",
                    help="check that every mutant's find text occurs exactly once (no build, no test)")
    args = ap.parse_args()

    mutants, problems = load_mutants()
    if args.check_list:
        return check_list(mutants, problems)
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        return 2
    if args.list:
        for m in mutants:
            print(f"{m['id']:<8} {m['room']:<14} {m['file']}: {m['bug']}")
        return 0
    unknown = [i for i in args.only if i not in {m["id"] for m in mutants}]
    if unknown:
        print(f"run.py: no mutant {', '.join(unknown)} (--list names them)", file=sys.stderr)
        return 2
    chosen = [m for m in mutants if not args.only or m["id"] in args.only]

    # From the repository root only: the paths of the list, ninja's and ctest's are relative to it.
    if Path.cwd().resolve() != ROOT:
        print(f"run.py: run it from the repository root ({ROOT})", file=sys.stderr)
        return 2
    build_dir = Path(args.build).resolve()
    if not (build_dir / "build.ninja").is_file():
        print(f"run.py: {build_dir} is no Ninja build tree (configure with -G Ninja -DMLC_BUILD_TESTS=ON)",
              file=sys.stderr)
        return 2
    dirty = dirty_files({m["file"] for m in chosen})
    if dirty:
        print("run.py: uncommitted changes in " + ", ".join(dirty) + ": commit or stash them first, a mutant would "
              "overwrite them", file=sys.stderr)
        return 2

    # SIGTERM as Ctrl-C: the finally of the mutant in flight restores its file.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    log_dir = build_dir / "mutation"
    log_dir.mkdir(exist_ok=True)
    with open(log_dir / "clean.log", "w", encoding="utf-8") as log:
        if build(build_dir, sorted({t for m in chosen for t in m["targets"]}), log) != 0:
            print(f"run.py: the clean tree does not build (see {log_dir / 'clean.log'})", file=sys.stderr)
            return 2
    counts = {"killed": 0, "survived": 0, "stale": 0, "error": 0}
    by_compiler = 0
    started = time.monotonic()
    for m in chosen:
        t0 = time.monotonic()
        outcome, detail = try_mutant(m, build_dir, log_dir)
        counts[outcome] += 1
        by_compiler += outcome == "killed" and detail == "by the compiler"
        print(f"{outcome:<9} {m['id']:<8} {m['room']:<14} {m['bug']}  [{detail or 'no test failed'}; "
              f"{time.monotonic() - t0:.0f} s]", flush=True)
        # Back to the clean build before the next mutant (ccache makes the restored file cheap).
        with open(log_dir / f"{m['id']}.log", "a", encoding="utf-8") as log:
            if build(build_dir, m["targets"], log) != 0:
                print(f"run.py: the restored tree does not build (see {log_dir / (m['id'] + '.log')})",
                      file=sys.stderr)
                return 2
    print(f"{counts['killed']} killed, {counts['survived']} survived ({by_compiler} by the compiler)"
          + (f", {counts['stale']} stale" if counts["stale"] else "")
          + (f", {counts['error']} errors" if counts["error"] else "")
          + f" in {time.monotonic() - started:.0f} s")
    return 0 if counts["survived"] == counts["stale"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("run.py: interrupted; the file in flight was restored", file=sys.stderr)
        sys.exit(130)
