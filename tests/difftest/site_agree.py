#!/usr/bin/env python3
"""Directory-mode agreement: a generated site-packages, every file's verdict against the real process.

A venv of the interpreter --python (`python -m venv --without-pip`) gets, in its site-packages, at least
30 packages compiled with gcc at test time (C only; extension modules against the interpreter's own
headers and named with its EXT_SUFFIX), of these kinds, several of each, mixed from the seed:
  healthy      extension modules needing nothing but libc (or libm), some in a subpackage, some named
               with the bare `.so` suffix;
  vendored     a module linking a vendored library in `<pkg>.libs/` or `<pkg>/.libs/` through DT_RUNPATH
               or DT_RPATH `$ORIGIN/...` (the library needing a second vendored one through its own
               `$ORIGIN`, at times, or with no search path of its own, found then only through the
               module's DT_RPATH, which is inherited, never its DT_RUNPATH);
  undefined    the vendored copy lacks a function the module (or the vendored library) was linked against;
  missing      a module (or its vendored library) needs a library that is nowhere;
  broken-init  a package whose __init__.py imports a module that fails to load, beside a healthy module
               (and at times a subpackage's): importing any of them fails with it;
  collision    two packages vendoring the same soname at two versions, B's __init__.py importing A at
               module level first, so that A's older copy is loaded first and B's module fails on the
               newer function, also when B reaches A through a pure-Python module of its own; the pair
               with the import order reversed (the newer copy first), the pair whose `import A` is only
               inside a function (never run by the import), and the pair with distinct sonames
               (auditwheel's renamed copies), which load;
  foreign-tag  an extension module tagged for another Python (another version, a debug build, musl)
               than the venv's: CPython's import never opens it; or one whose name has a suffix later in
               EXTENSION_SUFFIXES (.abi3.so, .so) beside one of the interpreter's tag, which the import
               opens instead;
  abi3         `.abi3.so` modules built with Py_LIMITED_API (one linking a missing library, at times);
  ctypes       a plain shared library (no PyInit_) that only ctypes loads: healthy, with a missing
               dependency, or calling the Python C API without linking libpython;
  preload      packages vendoring libpre.so.1 (pre_old, pre_new), a module using each: the second world
               runs with LD_PRELOAD naming a stale libpre.so.1 without pre_new;
  program      executables in `<pkg>/bin/` (PIE and ET_EXEC) linking a vendored library, one missing a
               library, one needing pre_new.

Two worlds over the same tree: without LD_PRELOAD, and with LD_PRELOAD=<work>/preload/libpre.so.1. In each,
musa-linkcheck runs once on the site-packages directory (`--format json`, the directory mode), in the venv's
environment as a user has it (VIRTUAL_ENV, its bin/ first on PATH, no LD_LIBRARY_PATH), and each named file's
verdict is its JSON `loads`. The real process decides every ELF file below site-packages (the oracle of
tests/bench/venv_bench.py, part 4): a program (ET_EXEC, or DF_1_PIE) by `ldd -r`; any other file by a fresh
interpreter of the venv that imports the innermost package holding it (its __init__ runs) and then loads it
with ctypes.CDLL(path, RTLD_NOW). An extension module (it exports PyInit_) is loaded by Python's import of its
dotted name, not by ctypes: before the CDLL that interpreter imports that name, and the file loads only when
that import works and opened this very file (a module tagged for another Python is never opened, which is
what the tool's `extension-tag` says).

The generator also states what each file should do; a real verdict that differs is the tester's error
(a world that no longer tests what it says), reported and failing the run like a disagreement.

Independent of the tool's code: nothing here comes from src/, and no expected value is computed with the tool.

Usage: site_agree.py --linkcheck BIN --work DIR [--seed S] [--python EXE] [--jobs J] [--keep]
Exit status: 0 every file agreed; 1 a disagreement, a tester error, or fewer than 30 packages; 2 usage;
77 a prerequisite is missing (a venv, gcc, nm, ldd, Python.h): skipped, unless CI is set, where a skip fails.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import string
import subprocess
import sys
import time

SKIP = 77
MIN_PACKAGES = 30
MARKER = ".site_agree"  # the work directory is ours: a directory without it is never removed
PRELOAD_SONAME = "libpre.so.1"


def skip(why):
    """A missing prerequisite: skipped (77), except under CI, which installs them all (as MLC_SKIP)."""
    ci = os.environ.get("CI", "")
    if ci and ci not in ("false", "0"):
        print(f"site_agree: a skip fails under CI, where the test command installs every prerequisite; "
              f"the skip reason: {why}", file=sys.stderr)
        return 1
    print(f"site_agree: SKIPPED: {why}")
    return SKIP


# ---------------------------------------------------------------------------------------------------
# Generation: plain data first (a seed always makes the same plan), built afterwards.
#
# A library: {key, soname, dest (relative to site-packages; None: installed nowhere), funcs (the installed
# copy's), link_funcs (the copy modules are linked against, a superset), needs [(key, func)], path, dtags}.
# A file: {dest, type (ext|abi3|plain|pyapi|program), modname, calls [(key, func)], path, dtags, pie, expect}.
# expect: {"plain": bool, "preload": bool}, whether the generator means it to load in each world.


class Plan:
    def __init__(self, rng, ext_suffix, version):
        self.rng = rng
        self.ext_suffix = ext_suffix
        self.version = version  # (3, 11)
        self.packages = []  # {name, kind, variant, init: {relpath: text}, libs [], files []}
        self.used = set()

    def name(self, tag):
        while True:
            n = tag + "_" + "".join(self.rng.choice(string.ascii_lowercase) for _ in range(5))
            if n not in self.used:
                self.used.add(n)
                return n

    def package(self, kind, variant, tag):
        pkg = {"name": self.name(tag), "kind": kind, "variant": variant, "init": {}, "libs": [], "files": []}
        self.packages.append(pkg)
        return pkg

    def libdir(self, pkg):
        """Where the package vendors its libraries, and the $ORIGIN path to it from depth `d` in the package."""
        r = self.rng
        style = r.choice(["dotlibs", "pkglibs", "pkglibs"])
        origin = r.choice(["$ORIGIN", "$ORIGIN", "${ORIGIN}"])
        if style == "pkglibs":  # auditwheel: site-packages/<pkg>.libs
            return f"{pkg['name']}.libs", lambda d: origin + "/" + "../" * d + f"{pkg['name']}.libs"
        return f"{pkg['name']}/.libs", lambda d: origin + "/" + "../" * (d - 1) + ".libs"

    def lib(self, pkg, soname, funcs, where, link_funcs=None, needs=(), path=None):
        lib = {"key": f"{pkg['name']}:{soname}", "soname": soname, "dest": f"{where}/{soname}" if where else None,
               "funcs": list(funcs), "link_funcs": list(link_funcs or funcs), "needs": list(needs), "path": path,
               "dtags": self.rng.choice(["runpath", "rpath"])}
        pkg["libs"].append(lib)
        return lib

    def module(self, pkg, modname, calls=(), path=None, sub=None, suffix=None, kind="ext", expect=True):
        where = pkg["name"] + (f"/{sub}" if sub else "")
        suffix = suffix or (".abi3.so" if kind == "abi3" else self.ext_suffix)
        f = {"dest": f"{where}/{modname}{suffix}", "type": kind, "modname": modname, "calls": list(calls),
             "path": path, "dtags": self.rng.choice(["runpath", "rpath"]), "pie": True,
             "expect": expect if isinstance(expect, dict) else {"plain": expect, "preload": expect}}
        pkg["files"].append(f)
        return f

    def init(self, pkg, lines, sub=None):
        rel = pkg["name"] + (f"/{sub}" if sub else "") + "/__init__.py"
        pkg["init"][rel] = "".join(line + "\n" for line in lines)

    def own_import(self, modname, pkgname):
        """How an __init__.py imports its own extension module (the forms packages use)."""
        return self.rng.choice([f"from . import {modname}", f"from .{modname} import call",
                                f"import {pkgname}.{modname}", f"from {pkgname} import {modname} as _m"])

    def funcs(self, prefix, n):
        return [f"{prefix}_f{k}" for k in range(n)]


def variants(rng, options, count):
    """`count` variants covering `options` in turn from a seeded start (each appears when count allows)."""
    start = rng.randrange(len(options))
    return [options[(start + i) % len(options)] for i in range(count)]


def gen_healthy(p, variant):
    pkg = p.package("healthy", variant, "hlt")
    r = p.rng
    calls = [("libm", "cos")] if r.random() < 0.5 else []
    suffix = ".so" if variant == "bare-suffix" else None
    p.module(pkg, "_core", calls=calls, suffix=suffix)
    lines = [p.own_import("_core", pkg["name"])] if r.random() < 0.6 else ["# nothing imported at import time"]
    p.init(pkg, lines)
    if variant == "subpackage":
        p.module(pkg, "_inner", sub="sub")
        p.init(pkg, [f"from . import _inner"] if r.random() < 0.5 else [], sub="sub")


def gen_vendored(p, variant):
    pkg = p.package("vendored", variant, "vnd")
    r = p.rng
    where, path_from = p.libdir(pkg)
    base = pkg["name"].split("_")[1]
    needs = []
    if variant in ("chain", "inherited"):  # the vendored library needs a second one beside it
        dep = p.lib(pkg, f"lib{base}dep.so.1", p.funcs(base + "dep", 2), where)
        needs = [(dep["key"], dep["funcs"][0])]
    # "inherited": the vendored library has no search path of its own, so its dependency is found only
    # through the module's DT_RPATH (searched for what the objects it loads need), never its DT_RUNPATH.
    lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 3), where, needs=needs,
                path=r.choice(["$ORIGIN", "${ORIGIN}"]) if variant == "chain" else None)
    sub = "sub" if r.random() < 0.3 else None
    depth = 2 if sub else 1
    m = p.module(pkg, "_core", calls=[(lib["key"], f) for f in lib["funcs"][:2]], path=path_from(depth), sub=sub)
    if variant == "inherited":
        lib["expect"] = False  # loaded by itself, nothing searches beside it
        m["expect"] = {"plain": m["dtags"] == "rpath", "preload": m["dtags"] == "rpath"}
    p.init(pkg, [p.own_import("_core", pkg["name"])] if (r.random() < 0.5 and not sub) else [])
    if sub:
        p.init(pkg, [], sub=sub)


def gen_undefined(p, variant):
    pkg = p.package("undefined", variant, "und")
    r = p.rng
    where, path_from = p.libdir(pkg)
    base = pkg["name"].split("_")[1]
    if variant == "in-dependency":  # the vendored library's own dependency lacks what it was linked against
        dep = p.lib(pkg, f"lib{base}dep.so.1", p.funcs(base + "dep", 1), where,
                    link_funcs=p.funcs(base + "dep", 2))
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 2), where, needs=[(dep["key"], dep["link_funcs"][1])],
                    path="$ORIGIN")
        lib_expect = False
        calls = [(lib["key"], lib["funcs"][0])]
    else:  # the module was built against a newer copy than the one vendored
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 2), where, link_funcs=p.funcs(base, 3))
        lib_expect = True
        calls = [(lib["key"], f) for f in lib["link_funcs"]]
    lib["expect"] = lib_expect
    p.module(pkg, "_core", calls=calls, path=path_from(1), expect=False)
    p.init(pkg, [p.own_import("_core", pkg["name"])] if r.random() < 0.5 else [])


def gen_missing(p, variant):
    pkg = p.package("missing", variant, "mis")
    r = p.rng
    base = pkg["name"].split("_")[1]
    gone = p.lib(pkg, f"lib{base}gone.so.2", p.funcs(base + "gone", 1), None)
    if variant == "in-dependency":
        where, path_from = p.libdir(pkg)
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 1), where, needs=[(gone["key"], gone["funcs"][0])],
                    path="$ORIGIN")
        lib["expect"] = False
        p.module(pkg, "_core", calls=[(lib["key"], lib["funcs"][0])], path=path_from(1), expect=False)
    else:
        p.module(pkg, "_core", calls=[(gone["key"], gone["funcs"][0])], expect=False)
    p.init(pkg, [p.own_import("_core", pkg["name"])] if r.random() < 0.5 else [])


def gen_collision(p, variant):
    """Two packages vendoring libvend.so.1 (or two renamed copies of it), one importing the other first.

    Left out on purpose: an `import A` under an `if` whose condition only running the code decides (a version
    check, an environment variable, TYPE_CHECKING) and an import done by a function that the __init__ calls:
    what the real import does then depends on values the files do not hold, and the tool reads the files."""
    r = p.rng
    a = p.package("collision", variant, "col")
    b = p.package("collision", variant, "col")
    tag = a["name"].split("_")[1]
    old, new = p.funcs("vend" + tag, 1), p.funcs("vend" + tag, 2)
    same = variant != "distinct"
    sa = f"libvend{tag}.so.1" if same else f"libvend{tag}-{a['name'][-5:]}.so.1"
    sb = f"libvend{tag}.so.1" if same else f"libvend{tag}-{b['name'][-5:]}.so.1"
    wa, pa = p.libdir(a)
    wb, pb = p.libdir(b)
    la = p.lib(a, sa, old, wa)
    lb = p.lib(b, sb, new, wb)
    first_import = r.choice(["import {0}", "import {0} as _dep", "from {0} import _core as _dep_core"])
    if variant == "via-module":
        # B's __init__ imports a pure-Python module of B, whose module-level line imports A.
        p.module(a, "_core", calls=[(la["key"], old[0])], path=pa(1))
        p.module(b, "_core", calls=[(lb["key"], new[1])], path=pb(1), expect=False)
        p.init(a, [p.own_import("_core", a["name"])])
        p.init(b, [r.choice(["from . import _impl", "from ._impl import *", f"import {b['name']}._impl"])])
        b["init"][f"{b['name']}/_impl.py"] = first_import.format(a["name"]) + "\n"
    elif variant == "in-function":
        # B imports A only inside a function, which the import does not run: B's copy is loaded first.
        p.module(a, "_core", calls=[(la["key"], old[0])], path=pa(1))
        p.module(b, "_core", calls=[(lb["key"], new[1])], path=pb(1))
        p.init(a, [p.own_import("_core", a["name"])])
        p.init(b, ["def _dependency():", "    " + first_import.format(a["name"]), "    return True"])
    elif variant in ("b-imports-a", "distinct"):
        # B's __init__ imports A first: A's copy (the older one, when the soname is the same) is loaded
        # first, and B's module, which calls the newer function, binds to it.
        p.module(a, "_core", calls=[(la["key"], old[0])], path=pa(1))
        p.module(b, "_core", calls=[(lb["key"], new[1])], path=pb(1), expect=not same)
        p.init(a, [p.own_import("_core", a["name"])])
        p.init(b, [first_import.format(a["name"])] + ([p.own_import("_core", b["name"])] if r.random() < 0.5 else []))
    else:  # "a-imports-b": the order reversed, so the newer copy is the one loaded first
        p.module(a, "_core", calls=[(la["key"], old[0])], path=pa(1))
        p.module(b, "_core", calls=[(lb["key"], new[1])], path=pb(1))
        p.init(b, [p.own_import("_core", b["name"])])
        p.init(a, [first_import.format(b["name"])] + ([p.own_import("_core", a["name"])] if r.random() < 0.5 else []))


def gen_broken_init(p, variant):
    """A package whose __init__.py imports a module that fails to load: importing anything in the package
    (a healthy sibling module, a module of a subpackage) fails with it."""
    pkg = p.package("broken-init", variant, "brk")
    base = pkg["name"].split("_")[1]
    if variant == "missing":
        gone = p.lib(pkg, f"lib{base}gone.so.1", p.funcs(base + "gone", 1), None)
        calls, path = [(gone["key"], gone["funcs"][0])], None
    else:
        where, path_from = p.libdir(pkg)
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 1), where, link_funcs=p.funcs(base, 2))
        calls, path = [(lib["key"], lib["link_funcs"][1])], path_from(1)
    p.module(pkg, "_core", calls=calls, path=path, expect=False)
    p.module(pkg, "_extra", expect=False)
    p.init(pkg, [p.own_import("_core", pkg["name"])])
    if p.rng.random() < 0.5:
        p.module(pkg, "_inner", sub="sub", expect=False)
        p.init(pkg, [], sub="sub")


def gen_foreign(p, variant):
    pkg = p.package("foreign-tag", variant, "tag")
    major, minor = p.version
    tags = {"other-version": f".cpython-{major}{minor + 1}-x86_64-linux-gnu.so",
            "older-version": f".cpython-{major}{minor - 1}-x86_64-linux-gnu.so",
            "debug-build": f".cpython-{major}{minor}d-x86_64-linux-gnu.so",
            "musl": f".cpython-{major}{minor}-x86_64-linux-musl.so"}
    if variant == "shadowed":
        # A module of the interpreter's own tag beside one of a suffix later in EXTENSION_SUFFIXES (a stale
        # in-place build's bare .so, an .abi3.so): the import opens the first, never the other.
        p.module(pkg, "_core")
        p.module(pkg, "_core", suffix=p.rng.choice([".so", ".abi3.so"]), expect=False)
        p.init(pkg, [p.own_import("_core", pkg["name"])] if p.rng.random() < 0.5 else [])
        return
    p.module(pkg, "_core", suffix=tags[variant], expect=False)
    # A wheel for another Python: its __init__ imports the module (and fails in Python), or leaves it to users.
    p.init(pkg, [p.own_import("_core", pkg["name"])] if p.rng.random() < 0.4 else [])


def gen_abi3(p, variant):
    pkg = p.package("abi3", variant, "abi")
    base = pkg["name"].split("_")[1]
    if variant == "missing":
        gone = p.lib(pkg, f"lib{base}gone.so.1", p.funcs(base + "gone", 1), None)
        p.module(pkg, "_core", kind="abi3", calls=[(gone["key"], gone["funcs"][0])], expect=False)
        p.init(pkg, [])
        return
    calls = []
    path = None
    if variant == "vendored":
        where, path_from = p.libdir(pkg)
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 1), where)
        calls, path = [(lib["key"], lib["funcs"][0])], path_from(1)
    p.module(pkg, "_core", kind="abi3", calls=calls, path=path)
    p.init(pkg, [p.own_import("_core", pkg["name"])] if p.rng.random() < 0.5 else [])


def gen_ctypes(p, variant):
    """A plain library in the package, loaded by ctypes when used (never by the package's import)."""
    pkg = p.package("ctypes", variant, "cty")
    base = pkg["name"].split("_")[1]
    sub = p.rng.choice([None, "lib"])  # pkg/lib/ has no __init__.py: a namespace portion
    dest = f"{pkg['name']}/{sub + '/' if sub else ''}lib{base}plain.so"
    f = {"dest": dest, "type": "plain", "modname": None, "calls": [], "path": None,
         "dtags": p.rng.choice(["runpath", "rpath"]), "pie": True, "expect": {"plain": True, "preload": True}}
    if variant == "missing":
        gone = p.lib(pkg, f"lib{base}gone.so.1", p.funcs(base + "gone", 1), None)
        f["calls"] = [(gone["key"], gone["funcs"][0])]
        f["expect"] = {"plain": False, "preload": False}
    elif variant == "python-api":  # calls the C API, no libpython linked: binds to the interpreter
        f["type"] = "pyapi"
    else:
        where = f"{pkg['name']}/{sub}" if sub else pkg["name"]
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 1), where)
        f["calls"], f["path"] = [(lib["key"], lib["funcs"][0])], "$ORIGIN"
    pkg["files"].append(f)
    p.init(pkg, ["import ctypes, os",
                 f"def load():",
                 f"    return ctypes.CDLL(os.path.join(os.path.dirname(__file__), {os.path.relpath(dest, pkg['name'])!r}))"])


def gen_preload(p, variant):
    """A vendored libpre.so.1 whose stale copy the second world preloads."""
    pkg = p.package("preload", variant, "pre")
    where, path_from = p.libdir(pkg)
    lib = p.lib(pkg, PRELOAD_SONAME, ["pre_old", "pre_new"], where)
    p.module(pkg, "_old", calls=[(lib["key"], "pre_old")], path=path_from(1))
    p.module(pkg, "_new", calls=[(lib["key"], "pre_new")], path=path_from(1), expect={"plain": True, "preload": False})
    imports = [p.own_import("_old", pkg["name"])] if variant == "imports-old" else []
    p.init(pkg, imports)


def gen_program(p, variant):
    pkg = p.package("program", variant, "prg")
    base = pkg["name"].split("_")[1]
    where, path_from = p.libdir(pkg)
    f = {"dest": f"{pkg['name']}/bin/{base}-tool", "type": "program", "modname": None, "calls": [],
         "path": path_from(2), "dtags": p.rng.choice(["runpath", "rpath"]), "pie": variant != "no-pie",
         "expect": {"plain": True, "preload": True}}
    if variant == "needs-preloaded":
        lib = p.lib(pkg, PRELOAD_SONAME, ["pre_old", "pre_new"], where)
        f["calls"] = [(lib["key"], "pre_new")]
        f["expect"] = {"plain": True, "preload": False}
    else:
        lib = p.lib(pkg, f"lib{base}.so.1", p.funcs(base, 2), where)
        f["calls"] = [(lib["key"], lib["funcs"][0])]
        if variant == "missing":
            gone = p.lib(pkg, f"lib{base}gone.so.1", p.funcs(base + "gone", 1), None)
            f["calls"].append((gone["key"], gone["funcs"][0]))
            f["expect"] = {"plain": False, "preload": False}
    pkg["files"].append(f)
    p.init(pkg, [])


# kind: (generator, variants, fewest, most) - fewest add up to MIN_PACKAGES (a collision counts two).
KINDS = [
    ("healthy", gen_healthy, ["plain", "subpackage", "bare-suffix"], 3, 4),
    ("vendored", gen_vendored, ["direct", "chain", "inherited"], 4, 5),
    ("undefined", gen_undefined, ["newer-build", "in-dependency"], 2, 3),
    ("missing", gen_missing, ["direct", "in-dependency"], 2, 3),
    ("collision", gen_collision, ["b-imports-a", "a-imports-b", "distinct", "via-module", "in-function"], 4, 5),
    ("broken-init", gen_broken_init, ["missing", "undefined"], 2, 2),
    ("foreign-tag", gen_foreign, ["other-version", "older-version", "debug-build", "musl", "shadowed"], 3, 5),
    ("abi3", gen_abi3, ["plain", "vendored", "missing"], 2, 3),
    ("ctypes", gen_ctypes, ["healthy", "missing", "python-api"], 3, 4),
    ("preload", gen_preload, ["imports-old", "imports-nothing"], 2, 3),
    ("program", gen_program, ["pie", "no-pie", "missing", "needs-preloaded"], 3, 4),
]


def generate(seed, ext_suffix, version):
    rng = random.Random(f"site-agree:{seed}")
    p = Plan(rng, ext_suffix, version)
    jobs = []
    for kind, gen, options, lo, hi in KINDS:
        for v in variants(rng, options, rng.randint(lo, hi)):
            jobs.append((gen, v))
    rng.shuffle(jobs)  # the order packages are generated in has no meaning; names come from the seed
    for gen, v in jobs:
        gen(p, v)
    return p


# ---------------------------------------------------------------------------------------------------
# Building (gcc), into <work>/build/<package>/ and then into site-packages.


def c_source(funcs, calls, python=None, modname=None, main=False, pyapi=False):
    out = []
    if python == "abi3":
        out.append("#define Py_LIMITED_API 0x03070000")
    if python:
        out.append("#define PY_SSIZE_T_CLEAN\n#include <Python.h>")
    for _, f in calls:
        out.append(f"extern {'double' if f == 'cos' else 'int'} {f}({'double' if f == 'cos' else 'void'});")
    body = " + ".join(f"(int){f}({'0.5' if f == 'cos' else ''})" for _, f in calls) or "0"
    for k, f in enumerate(funcs):
        out.append(f"int {f}(void) {{ return {k + 1} + {body if k == 0 else '0'}; }}")
    if pyapi:
        out.append("extern int Py_IsInitialized(void);")
        out.append("int plain_probe(void) { return Py_IsInitialized(); }")
    if not funcs:
        out.append(f"int generated_entry(void) {{ return {body}; }}")
    if python:
        out.append("static PyObject *call(PyObject *self, PyObject *args) "
                   "{ (void)self; (void)args; return PyLong_FromLong(generated_entry()); }")
        out.append("static PyMethodDef methods[] = {{\"call\", call, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};")
        out.append(f"static struct PyModuleDef def = {{PyModuleDef_HEAD_INIT, \"{modname}\", NULL, -1, methods}};")
        out.append(f"PyMODINIT_FUNC PyInit_{modname}(void) {{ return PyModule_Create(&def); }}")
    if main:
        out.append("int main(void) { return generated_entry() < 0; }")
    return "\n".join(out) + "\n"


class Builder:
    def __init__(self, work, site, include, env):
        self.work, self.site, self.include, self.env = work, site, include, env

    def gcc(self, args):
        r = subprocess.run(["gcc", *args], capture_output=True, text=True, env=self.env, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"gcc {' '.join(args)}: {r.stderr.strip()[:600]}")

    def link_flags(self, path, dtags):
        if not path:
            return []
        return [f"-Wl,-rpath,{path}", "-Wl," + ("--enable-new-dtags" if dtags == "runpath" else "--disable-new-dtags")]

    def build_package(self, pkg):
        bdir = os.path.join(self.work, "build", pkg["name"])
        os.makedirs(bdir, exist_ok=True)
        libs = {lib["key"]: lib for lib in pkg["libs"]}
        built = {}  # key -> the copy to link against

        def build_lib(lib):
            if lib["key"] in built:
                return built[lib["key"]]
            deps = [build_lib(libs[k]) for k in dict.fromkeys(k for k, _ in lib["needs"])]
            copies = [("link", lib["link_funcs"])]
            if lib["funcs"] != lib["link_funcs"]:
                copies.append(("inst", lib["funcs"]))
            for which, funcs in copies:
                d = os.path.join(bdir, which, lib["soname"].replace("/", "_"))
                os.makedirs(d, exist_ok=True)
                src = os.path.join(d, "lib.c")
                with open(src, "w") as f:
                    f.write(c_source(funcs, lib["needs"]))
                out = os.path.join(d, lib["soname"])
                self.gcc(["-shared", "-fPIC", "-O0", "-fno-builtin", "-o", out, src, f"-Wl,-soname,{lib['soname']}", *deps,
                          *self.link_flags(lib["path"], lib["dtags"])])
                if which == copies[-1][0] and lib["dest"]:
                    dest = os.path.join(self.site, lib["dest"])
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    shutil.copyfile(out, dest)
            built[lib["key"]] = os.path.join(bdir, "link", lib["soname"].replace("/", "_"), lib["soname"])
            return built[lib["key"]]

        for lib in pkg["libs"]:
            build_lib(lib)
        for k, f in enumerate(pkg["files"]):
            src = os.path.join(bdir, f"file{k}.c")
            python = {"ext": "full", "abi3": "abi3"}.get(f["type"])
            with open(src, "w") as out:
                out.write(c_source([], f["calls"], python=python, modname=f["modname"], main=f["type"] == "program",
                                   pyapi=f["type"] == "pyapi"))
            dest = os.path.join(self.site, f["dest"])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            deps = [built[key] for key in dict.fromkeys(key for key, _ in f["calls"]) if key != "libm"]
            rpath_link = sorted({os.path.dirname(d) for d in built.values()})
            args = ["-O0", "-fno-builtin", "-o", dest, src, *deps, *self.link_flags(f["path"], f["dtags"])]
            args += [f"-Wl,-rpath-link,{d}" for d in rpath_link]
            if any(key == "libm" for key, _ in f["calls"]):
                args.append("-lm")
            if f["type"] == "program":
                args = (["-fPIE", "-pie"] if f["pie"] else ["-fno-PIE", "-no-pie"]) + args
            else:
                args = ["-shared", "-fPIC"] + args
            if python:
                args = [f"-I{self.include}"] + args
            self.gcc(args)
        for rel, text in pkg["init"].items():
            path = os.path.join(self.site, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)


def build_preload(work, env):
    """The stale copy the second world preloads: libpre.so.1 with pre_old only."""
    d = os.path.join(work, "preload")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "pre.c")
    with open(src, "w") as f:
        f.write(c_source(["pre_old"], []))
    out = os.path.join(d, PRELOAD_SONAME)
    r = subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", out, src, f"-Wl,-soname,{PRELOAD_SONAME}"],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"gcc (preload): {r.stderr.strip()[:600]}")
    return out


# ---------------------------------------------------------------------------------------------------
# The real process: tests/oracle/real_process.py, shared with the venv benchmark.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
from real_process import elf_files, oracle  # noqa: E402


# ---------------------------------------------------------------------------------------------------


def child_env(work, venv, preload):
    """The venv's environment as a user has it, scratch kept inside the work directory."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP",
                        "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "LD_BIND_NOW", "LD_DEBUG")}
    env["TMPDIR"] = os.path.join(work, "tmp")
    env["HOME"] = os.path.join(work, "home")
    env["XDG_CACHE_HOME"] = os.path.join(work, "home", ".cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # both worlds see the same tree
    if venv:
        env["VIRTUAL_ENV"] = venv
        env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    if preload:
        env["LD_PRELOAD"] = preload
    return env


def prerequisites(python):
    for tool in ("gcc", "nm", "ldd"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    if not os.access(python, os.X_OK):
        return f"{python} is absent"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--linkcheck", required=True)
    ap.add_argument("--work", required=True, help="a scratch directory, created and removed at the end")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--python", default="/usr/bin/python3", help="the interpreter the venv is made of")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="leave the work directory for a look afterwards")
    ap.add_argument("--verbose", action="store_true", help="print every file's verdicts, agreeing or not")
    args = ap.parse_args()
    args.linkcheck = os.path.abspath(args.linkcheck)
    args.work = os.path.abspath(args.work)
    if not os.access(args.linkcheck, os.X_OK):
        print(f"site_agree: {args.linkcheck}: not an executable", file=sys.stderr)
        return 2
    if os.path.isdir(args.work) and os.listdir(args.work) and not os.path.exists(os.path.join(args.work, MARKER)):
        print(f"site_agree: {args.work} is not empty and not a work directory of this script: refusing to use "
              f"(and later remove) it", file=sys.stderr)
        return 2
    missing = prerequisites(args.python)
    if missing:
        return skip(missing)
    shutil.rmtree(args.work, ignore_errors=True)
    for d in ("tmp", "home"):
        os.makedirs(os.path.join(args.work, d))
    open(os.path.join(args.work, MARKER), "w").close()
    try:
        return run(args)
    finally:
        if not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)


def run(args):
    started = time.time()
    venv = os.path.join(args.work, "venv")
    base_env = child_env(args.work, None, None)
    r = subprocess.run([args.python, "-m", "venv", "--without-pip", venv], capture_output=True, text=True,
                       env=base_env)
    if r.returncode != 0:
        return skip(f"{args.python} -m venv --without-pip fails (the venv module, python3-venv): "
                    f"{r.stderr.strip()[-300:]}")
    py = os.path.join(venv, "bin", "python3")
    env = child_env(args.work, venv, None)
    facts = json.loads(subprocess.run(
        [py, "-c", "import json, sys, sysconfig; print(json.dumps({'include': sysconfig.get_paths()['include'], "
         "'site': sysconfig.get_paths()['purelib'], 'suffix': sysconfig.get_config_var('EXT_SUFFIX'), "
         "'version': list(sys.version_info[:2])}))"],
        capture_output=True, text=True, env=env, check=True).stdout)
    if not os.path.exists(os.path.join(facts["include"], "Python.h")):
        return skip(f"{facts['include']}/Python.h is absent (python3-dev)")
    site = facts["site"]
    plan = generate(args.seed, facts["suffix"], tuple(facts["version"]))
    builder = Builder(args.work, site, facts["include"], env)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(builder.build_package, plan.packages))
    stale = build_preload(args.work, env)
    built_at = time.time()

    # What the generator means each file to do, by path.
    intent, kind_of = {}, {}
    for pkg in plan.packages:
        for f in pkg["files"]:
            intent[os.path.join(site, f["dest"])] = f["expect"]
            kind_of[os.path.join(site, f["dest"])] = f"{pkg['kind']}/{pkg['variant']}"
        for lib in pkg["libs"]:
            if lib["dest"]:
                ok = lib.get("expect", True)
                intent[os.path.join(site, lib["dest"])] = {"plain": ok, "preload": ok}
                kind_of[os.path.join(site, lib["dest"])] = f"{pkg['kind']}/{pkg['variant']} (vendored)"
    files = elf_files(site)
    packages = sum(1 for name in os.listdir(site) if os.path.exists(os.path.join(site, name, "__init__.py")))
    print(f"site_agree: seed {args.seed}: {packages} packages, {len(files)} ELF files in {site} "
          f"(built in {built_at - started:.1f} s)", flush=True)

    worlds = [("plain", None), ("preload", stale)]
    verdicts = {}  # (world, path) -> (tool ok or None, real ok, real said)
    problems = 0
    for world, preload in worlds:
        wenv = child_env(args.work, venv, preload)
        report = os.path.join(args.work, f"report-{world}.json")
        # The tool runs in the user's environment, LD_PRELOAD included; a sanitized build of it refuses to
        # start when a preload comes before its runtime (ASan's own check, not the tool's), so it is told not to.
        tenv = dict(wenv)
        tenv["ASAN_OPTIONS"] = ":".join(o for o in (wenv.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0") if o)
        r = subprocess.run([args.linkcheck, "--format", "json", "-o", report, site], capture_output=True, text=True,
                           env=tenv, timeout=600)
        if r.returncode not in (0, 1) or not os.path.exists(report):
            print(f"site_agree: world {world}: musa-linkcheck exit {r.returncode}: {r.stderr.strip()[:600]}")
            problems += 1
            continue
        with open(report) as f:
            doc = json.load(f)
        for e in doc.get("errors", []):
            print(f"site_agree: world {world}: the tool's error on {e.get('file')}: {e.get('message')}")
        tool = {lib["path"]: lib.get("loads") for lib in doc["libraries"] if lib.get("role") == "target"}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            real = list(pool.map(lambda p: oracle(p, site, py, wenv), files))
        for path, (ok, said) in zip(files, real):
            verdicts[(world, path)] = (tool.get(path), ok, said)
        print(f"  world {world}{' (LD_PRELOAD=' + preload + ')' if preload else ''}: tool exit {r.returncode}, "
              f"real failures {sum(1 for ok, _ in real if not ok)} of {len(files)}", flush=True)

    agree_files, disagree_files, tester = 0, 0, 0
    for path in files:
        rel = os.path.relpath(path, site)
        bad = False
        for world, _ in worlds:
            if (world, path) not in verdicts:
                bad = True
                continue
            tool_ok, ok, said = verdicts[(world, path)]
            if args.verbose:
                print(f"  [{world}] {rel} ({kind_of.get(path, '?')}): tool {tool_ok}; real {said}")
            if tool_ok is None or tool_ok != ok:
                bad = True
                says = "nothing (not a named file of its report)" if tool_ok is None else \
                    ("loads" if tool_ok else "fails")
                print(f"DISAGREE [{world}] {rel} ({kind_of.get(path, '?')}): tool says {says}; "
                      f"real process says {said}")
            want = intent.get(path, {}).get(world)
            if want is not None and want != ok:
                tester += 1
                print(f"TESTER [{world}] {rel} ({kind_of.get(path, '?')}): generated to "
                      f"{'load' if want else 'fail'}, yet the real process says {said}")
        agree_files += 0 if bad else 1
        disagree_files += 1 if bad else 0
    by_kind = {}
    for (world, path), (_, ok, _) in sorted(verdicts.items()):
        k = kind_of.get(path, "?").split("/")[0]
        seen = by_kind.setdefault(k, [0, 0])
        seen[0] += 1
        seen[1] += 0 if ok else 1
    print("real verdicts by kind (file verdicts over both worlds, of them failing): " +
          ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(by_kind.items())))
    print(f"site_agree: {packages} packages, {len(files)} files: {agree_files} agree, {disagree_files} disagree "
          f"(seed {args.seed}, 2 worlds, {time.time() - started:.0f} s)")
    if packages < MIN_PACKAGES:
        print(f"site_agree: only {packages} packages generated, fewer than {MIN_PACKAGES}", file=sys.stderr)
        return 1
    if tester:
        print(f"site_agree: {tester} files where the real process does not do what the generator meant: the "
              f"tester's error, fix the generator", file=sys.stderr)
        return 1
    return 1 if disagree_files or problems else 0


if __name__ == "__main__":
    sys.exit(main())
