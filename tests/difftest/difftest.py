#!/usr/bin/env python3
"""Differential tester: generated environments, musa-linkcheck's verdict against the real loader's.

Like Csmith for compilers, it generates small worlds: graphs of C libraries built with gcc at run time,
and loads each with the real loader - a libc-only C host doing dlopen(path, RTLD_NOW) after its
preloads (RTLD_GLOBAL or RTLD_LOCAL), a program run with LD_BIND_NOW=1, or a package imported by a
fresh /usr/bin/python3 - while musa-linkcheck checks the same world from its files.

What the worlds hold (each a rule of glibc 2.36's elf/dl-load.c, dl-deps.c, dl-version.c, dl-lookup.c,
dl-reloc.c, dl-tls.c, dl-open.c, dl-hwcaps.c):
  DT_NEEDED graphs; DT_RPATH/DT_RUNPATH with $ORIGIN, ${ORIGIN}, $PLATFORM, $LIB, unknown tokens ($FOO,
  kept literally, so a directory named "d$FOO" is searched), ';' (no separator there), empty elements;
  sonames with dynamic string tokens (libp-$PLATFORM.so.1, $ORIGIN/libp.so.1) and relative paths
  (./libp.so.1, opened in the current directory); symbol versions (a version script; a stale copy
  lacking a node, or built without any: glibc's check_match assertion); hidden, weak, protected,
  IFUNC and GNU_UNIQUE definitions; weak undefined references; stale copies shadowing the right one,
  also in DIR/glibc-hwcaps/x86-64-vN/ and the legacy DIR/tls/, DIR/x86_64/... subdirectories;
  decoy files where a library is searched (empty, text, a directory, ET_REL, ET_EXEC, PIE, big-endian,
  other class or machine, bad OS ABI or ABI version, nonzero padding, bad versions or phentsize, no
  PT_DYNAMIC or PT_LOAD, a symlink loop); -z nodefaultlib with a stray libc.so.6 beside; -z nodlopen;
  thread-local variables used with the initial-exec model (glibc's static TLS surplus, and the
  tunable glibc.rtld.optional_static_tls), also where the copy loaded defines them as plain data;
  programs with copy relocations (also against protected data of an
  GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS library) run through a symlink ($ORIGIN is the real
  path); a preloaded copy under a file name that is not its soname; symlinked sonames; missing files;
  LD_LIBRARY_PATH with empty entries anywhere; GLIBC_TUNABLES for the CPU level and static TLS.

Compared: whether the load fails; every cause the loader names against the tool's findings (the
undefined symbol with its version, the library not found, the version not found, the file refused
and glibc's words for it, the NOOPEN object, the static TLS block, the assertions and the SIGFPE that
end the process); a message the tester does not understand is a disagreement of its own; which copy
of each library was mapped (/proc/self/maps when it loads; LD_DEBUG=files,libs up to the failure
when it does not) against the files the tool's load picked. A world whose preload or first import
fails by itself is set aside; more than 5% set aside fails the run.

A disagreement is shrunk (each part of the world dropped in turn while the disagreement stays) and
saved as a JSON description that --replay rebuilds from source and checks again.

Usage: difftest.py --linkcheck BIN --work DIR [--seed S] [--count N] [--jobs J] [--replay DIR]
                   [--save DIR] [--feature NAME] [--no-shrink]
Exit status: 0 when every world agreed, 1 when one did not (each printed), 2 on a usage error.
Seeded and reproducible: world K of seed S is always the same world.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time

PYTHON = "/usr/bin/python3"
LDSO = "/lib64/ld-linux-x86-64.so.2"
SET_ASIDE_LIMIT = 0.05

# The features a world may hold (--feature forces one of them on every world).
FEATURES = ["hwcaps", "unknown_token", "semicolon", "dst_needed", "cwd_needed", "nodeflib_libc", "decoy", "noopen",
            "static_tls", "tls_mismatch", "noversym", "preload_name", "program", "copy_reloc", "definitions",
            "python", "tunables"]

DECOYS = ["empty", "text", "dir", "rel", "exec", "pie", "be", "osabi", "abiver", "pad", "machine", "class32",
          "eversion", "phentsize", "short", "nodyn", "noload", "loop"]

# ---------------------------------------------------------------------------------------------------
# The machine: what the real loader searches here (ld.so --help), for the generator's subdirectories.


def machine_facts():
    r = subprocess.run([LDSO, "--help"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    levels, legacy, platform = [], [], "x86_64"
    section = None
    for line in r.stdout.splitlines():
        if line.startswith("Subdirectories of glibc-hwcaps"):
            section = "hwcaps"
        elif line.startswith("Legacy HWCAP subdirectories"):
            section = "legacy"
        elif not line.startswith("  "):
            section = None
        elif section == "hwcaps" and "supported" in line:
            levels.append(line.split()[0])
        elif section == "legacy":
            name = line.split()[0]
            if "AT_PLATFORM" in line:
                platform = name
            if "searched" in line and name not in legacy:
                legacy.append(name)
    # glibc 2.37 dropped the legacy section (and its AT_PLATFORM line): glibc's own dl_platform, which $PLATFORM
    # expands to ("haswell" on an AVX2 Intel CPU), is in --list-diagnostics (glibc 2.33 on).
    d = subprocess.run([LDSO, "--list-diagnostics"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in d.stdout.splitlines():
        if line.startswith('dl_platform="') and line.endswith('"'):
            platform = line[len('dl_platform="'):-1]
    return {"levels": levels, "legacy": legacy, "platform": platform}


MACHINE = None


def machine():
    global MACHINE
    if MACHINE is None:
        MACHINE = machine_facts()
    return MACHINE


# ---------------------------------------------------------------------------------------------------
# Generation: a world is plain data (JSON), so a saved one replays exactly. Every key added since the
# first saved worlds has a default (lib_get), so they replay unchanged.

LIB_DEFAULTS = {"soname_dst": None, "subdir": "", "nodeflib": False, "noopen": False, "tls": None, "tls_uses": [],
                "ifunc": False, "unique": False, "data": [], "protected": False, "decoys": []}
STALE_DEFAULTS = {"sub": "", "noversions": False, "nontls": False, "protected_indirect": False, "protected": False}
TARGET_DEFAULTS = {"program": False, "via_symlink": False, "data_uses": [], "tls_uses": [], "nodeflib": False}


def lib_get(lib, key):
    return lib.get(key, LIB_DEFAULTS.get(key, TARGET_DEFAULTS.get(key)))


def generate(rng, feature=None):
    """One world: providers p0..pn-1 (p_i may need p_j, j > i), a target needing some of them."""
    want = {f: (f == feature) if feature else rng.random() < 0.12 for f in FEATURES}
    if feature is None and rng.random() < 0.35:  # a third of the worlds keep to the classic rules
        want = {f: False for f in FEATURES}
    n = rng.randint(1, 4)
    dirs = ["d0", "d1", "d2", "d3"]
    if want["unknown_token"]:
        dirs.append(rng.choice(["d$FOO", "d${BAR}x", "d$ORIGINX"]))
    if want["semicolon"]:
        dirs.append("d4;d5")
    libs = []
    for i in range(n):
        funcs = [f"p{i}_f{k}" for k in range(rng.randint(1, 3))]
        lib = {
            "name": f"libp{i}.so.1",
            "dir": rng.choice(dirs),
            "funcs": funcs,
            "hidden": [f for f in funcs[1:] if rng.random() < 0.15],
            "weak_defs": [f for f in funcs if rng.random() < 0.1],
            "versions": rng.random() < 0.3,  # funcs[0] in P<i>_1, the rest in P<i>_2
            "needs": sorted(rng.sample(range(i + 1, n), rng.randint(0, n - i - 1))) if i + 1 < n else [],
            "calls": [],
            "path_kind": rng.choice(["none", "none", "rpath", "runpath"]),
            "path": [],
            "symlink": rng.random() < 0.2,  # the file is libpN.so.1.0, libpN.so.1 a symlink to it
            "missing": False,
            "stale": None,  # {"dir", "sub", "drop", "drop_v2", "noversions", "nontls", "protected_indirect"}
        }
        libs.append(lib)
    for i, lib in enumerate(libs):
        for j in lib["needs"]:
            for f in libs[j]["funcs"]:
                if rng.random() < 0.5:
                    lib["calls"].append(f)
        lib["path"] = gen_path(rng, dirs)
        if rng.random() < 0.25:
            lib["stale"] = gen_stale(rng, lib, dirs)
        lib["missing"] = rng.random() < 0.08
    target = {
        "name": "libtarget.so",
        "dir": rng.choice(dirs),
        "needs": sorted(rng.sample(range(n), rng.randint(1, n))),
        "calls": [],
        "weak_calls": ["nowhere_weak"] if rng.random() < 0.3 else [],
        "extra_calls": ["nowhere_strong"] if rng.random() < 0.05 else [],
        "path_kind": rng.choice(["none", "rpath", "runpath", "runpath"]),
        "path": gen_path(rng, dirs),
    }
    for j in target["needs"]:
        for f in libs[j]["funcs"]:
            if rng.random() < 0.6:
                target["calls"].append(f)
    # A call into a provider reached only indirectly binds too: the scope holds the whole closure.
    if rng.random() < 0.3:
        j = rng.randrange(n)
        target["calls"].append(libs[j]["funcs"][0])
    target["calls"] = sorted(set(target["calls"]))
    llp = []
    for _ in range(rng.randint(0, 4)):
        llp.append(rng.choice(dirs + ["", "", "nonexistent"]))
    if rng.random() < 0.65:  # most libraries found: a world then fails (or not) on its other features
        reach = sorted({lib["dir"] for lib in libs} | {lib["stale"]["dir"] for lib in libs if lib["stale"]})
        rng.shuffle(reach)
        llp += reach
    world = {"dirs": dirs, "libs": libs, "target": target, "ld_library_path": llp,
             "cwd": rng.choice(dirs + ["cwd"]), "preloads": []}
    for lib in libs:
        for key, value in LIB_DEFAULTS.items():
            lib[key] = copy.deepcopy(value)
    for key, value in TARGET_DEFAULTS.items():
        target[key] = copy.deepcopy(value)
    target["tls_uses"] = []
    add_features(rng, world, want)
    return world


def gen_path(rng, dirs):
    out = []
    for _ in range(rng.randint(0, 3)):
        d = rng.choice(dirs)
        out.append(rng.choice(["$ORIGIN", f"$ORIGIN/../{d}", "@ROOT@/" + d, "", "${ORIGIN}/../" + d]))
    return out


def gen_stale(rng, lib, dirs):
    return {"dir": rng.choice([d for d in dirs if d != lib["dir"]] or dirs), "sub": "",
            "drop": [f for f in lib["funcs"] if rng.random() < 0.5],
            "drop_v2": lib["versions"] and rng.random() < 0.5,
            "noversions": False, "nontls": False, "protected_indirect": False}


def hwcaps_subdirs():
    """Subdirectories a copy may be put in: glibc-hwcaps levels and legacy names, each searched or not
    depending on the CPU (one never is). A fixed list, so that a seed makes the same worlds anywhere."""
    return ["avx512_1", "glibc-hwcaps/x86-64-v2", "glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v4",
            "glibc-hwcaps/x86-64-v9", "haswell", "tls", "tls/x86_64", "x86_64", "x86_64/x86_64"]


def add_features(rng, world, want):
    libs, target, dirs = world["libs"], world["target"], world["dirs"]
    n = len(libs)
    subs = hwcaps_subdirs()
    if want["hwcaps"]:
        for lib in libs:
            if rng.random() < 0.5:
                lib["subdir"] = rng.choice(subs)
            if rng.random() < 0.6:
                lib["stale"] = lib["stale"] or gen_stale(rng, lib, dirs)
                lib["stale"]["dir"] = rng.choice(dirs)
                lib["stale"]["sub"] = rng.choice(subs)
    if want["unknown_token"] or want["semicolon"]:
        special = dirs[4:]
        for lib in libs + [target]:
            if rng.random() < 0.5:
                lib["path"].append(rng.choice(["@ROOT@/", "$ORIGIN/../"]) + rng.choice(special))
                lib["path_kind"] = lib["path_kind"] if lib["path_kind"] != "none" else rng.choice(["rpath", "runpath"])
        for lib in libs:
            if rng.random() < 0.5:
                lib["dir"] = rng.choice(special)
    if want["dst_needed"]:
        for lib in libs:
            if rng.random() < 0.5:
                lib["soname_dst"] = rng.choice(["platform", "platform", "origin"])
    if want["cwd_needed"]:
        lib = rng.choice(libs)
        lib["soname_dst"] = "cwd"
        lib["dir"] = world["cwd"] if world["cwd"] in dirs else "cwd"
    if want["nodeflib_libc"]:
        holder = rng.choice(libs + [target])
        holder["nodeflib"] = True
        world["libc_decoy"] = {"dir": holder["dir"], "kind": rng.choice(["stub", "empty", "text"])}
        if rng.random() < 0.5:
            holder["path"].append("$ORIGIN")
            holder["path_kind"] = holder["path_kind"] if holder["path_kind"] != "none" else "runpath"
    if want["decoy"]:
        for _ in range(rng.randint(1, 2)):
            lib = rng.choice(libs)
            lib["decoys"].append({"dir": rng.choice(dirs), "sub": rng.choice([""] * 4 + subs),
                                  "kind": rng.choice(DECOYS)})
    if want["noopen"]:
        rng.choice(libs)["noopen"] = True
    if want["static_tls"] or want["tls_mismatch"]:
        for i, lib in enumerate(libs):
            if rng.random() < 0.6:
                lib["tls"] = {"size": rng.choice([8, 64, 200, 640, 1000, 1500, 1700, 1720, 2500, 6000])}
        for i, lib in enumerate([target] + libs):
            reach = target["needs"] if i == 0 else libs[i - 1]["needs"]
            for j in reach:
                if libs[j].get("tls") and rng.random() < 0.7:
                    lib["tls_uses"] = lib_get(lib, "tls_uses") + [[j, rng.choice(["ie", "ie", "gd"])]]
        if want["tls_mismatch"]:
            for lib in libs:
                if lib.get("tls") and rng.random() < 0.6:
                    lib["stale"] = lib["stale"] or gen_stale(rng, lib, dirs)
                    lib["stale"]["nontls"] = True
        if want["tunables"] and rng.random() < 0.5:
            world["tunables"] = "glibc.rtld.optional_static_tls=" + str(rng.choice([0, 256, 1024, 4096, 8192]))
    if want["noversym"]:
        for j, lib in enumerate(libs):
            if rng.random() < 0.5:
                lib["versions"] = True
                lib["stale"] = lib["stale"] or gen_stale(rng, lib, dirs)
                lib["stale"]["noversions"] = True
                if rng.random() < 0.7:  # found first, and called where it has the symbol
                    world["ld_library_path"].insert(0, lib["stale"]["dir"])
                    lib["stale"]["drop"] = []
                    kept = [f for f in lib["funcs"] if f not in lib["stale"]["drop"] and f not in lib["hidden"]]
                    if kept and j in target["needs"]:
                        target["calls"] = sorted(set(target["calls"] + kept[:1]))
    if want["definitions"] or want["copy_reloc"]:
        for lib in libs:
            lib["ifunc"] = rng.random() < 0.4
            lib["unique"] = rng.random() < 0.4
            lib["data"] = [f"p{libs.index(lib)}_d{k}" for k in range(rng.randint(0, 2))]
            lib["protected"] = bool(lib["data"]) and rng.random() < 0.4
    if want["program"] or want["copy_reloc"]:
        target["program"] = True
        target["name"] = "prog"
        target["via_symlink"] = rng.random() < 0.6
        # ld links a program only against what its own DT_NEEDED libraries define.
        direct = {f for j in target["needs"] for f in libs[j]["funcs"] if f not in libs[j]["hidden"]}
        target["calls"] = [f for f in target["calls"] if f in direct]
        target["extra_calls"] = []
        if want["copy_reloc"]:
            for j in target["needs"]:
                for d in libs[j]["data"]:
                    if rng.random() < 0.7:
                        target["data_uses"].append(d)
            for j in target["needs"]:
                # ld refuses a copy relocation against protected data: the program links against a
                # copy with default visibility; the copy found at run time may have protected data
                # (with or without GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS) or lack the data.
                libs[j]["protected"] = False
                if libs[j]["data"] and rng.random() < 0.5:
                    libs[j]["stale"] = libs[j]["stale"] or gen_stale(rng, libs[j], dirs)
                    how = rng.choice(["protected_indirect", "protected", "drop"])
                    if how == "drop":
                        libs[j]["stale"]["drop"] = libs[j]["stale"]["drop"] + libs[j]["data"][:1]
                    else:
                        libs[j]["stale"][how] = True
    if want["tunables"] and not world.get("tunables"):
        world["tunables"] = rng.choice(["glibc.cpu.hwcaps=-AVX512F", "glibc.cpu.hwcaps=-AVX2",
                                        "glibc.rtld.optional_static_tls=2048"])
        for lib in libs:
            if rng.random() < 0.4:
                lib["subdir"] = rng.choice(subs)
    decoy = world.get("libc_decoy")
    if decoy:
        # The host itself (or Python) must not pick the stray libc.so.6 up at its own start.
        world["ld_library_path"] = [e for e in world["ld_library_path"] if e != decoy["dir"] and
                                    not (e == "" and world["cwd"] == decoy["dir"])]
    clean = not any(lib_get(lb, "decoys") or lib_get(lb, "noopen") or lib_get(lb, "tls") or lb["missing"] or
                    lib_get(lb, "soname_dst") or lb["stale"] for lb in libs)
    if target.get("program"):
        return
    # What is loaded before the target (a preload, the package imported first) must load by itself,
    # or the world measures nothing: only libraries whose whole closure is sound, found from anywhere.
    healthy = [j for j in range(n) if sound_closure(world, j)]
    if healthy and (want["preload_name"] or (clean and rng.random() < 0.3)):
        j = rng.choice(healthy)
        world["preloads"].append({"lib": j, "global": rng.random() < 0.5, "renamed": want["preload_name"]})
    # A Python world: the target is the extension module of package pkga, whose __init__ may import
    # package pkgb (its own extension, linking other libraries) first; Python imports each with
    # RTLD_LOCAL, which the tool is told as --python and --with PKGB_EXT:local.
    if want["python"] or (clean and rng.random() < 0.1):
        world["preloads"] = []
        for lib in libs:  # a module's $ORIGIN copies would go beside it, where pkgb's import misses them
            if lib_get(lib, "soname_dst") == "origin":
                lib["soname_dst"] = None
        first = None
        healthy = [j for j in range(n) if sound_closure(world, j)]
        if healthy and rng.random() < 0.6:
            first = {"needs": sorted(rng.sample(healthy, rng.randint(1, len(healthy)))), "calls": []}
            for j in first["needs"]:
                first["calls"] += [f for f in libs[j]["funcs"] if rng.random() < 0.5]
        world["python"] = {"first": first}


def sound_closure(world, j):
    """Whether lib j loads by itself wherever it is asked for from: a library needing nothing, found
    (not missing), alone of its name (no stale copy, no decoy), without the features that fail a load."""
    lib = world["libs"][j]
    return not (lib["needs"] or lib["missing"] or lib["stale"] or lib_get(lib, "decoys") or lib_get(lib, "noopen") or
                lib_get(lib, "tls") or lib_get(lib, "soname_dst"))


# ---------------------------------------------------------------------------------------------------
# Building a world from its description, under `root`.


def c_source(lib, funcs, hidden, weak_defs, variant=None):
    """`variant`: the stale copy's description (data dropped, TLS as plain data, protected data)."""
    variant = variant or {}
    lines = ["#include <stddef.h>"]
    for f in lib.get("calls", []):
        lines.append(f"extern int {f}(void);")
    for f in lib.get("weak_calls", []):
        lines.append(f"extern int {f}(void) __attribute__((weak));")
    for f in lib.get("extra_calls", []):
        lines.append(f"extern int {f}(void);")
    for d in lib_get(lib, "data_uses"):
        lines.append(f"extern int {d};")
    uses = []
    for j, model in lib_get(lib, "tls_uses"):
        var = f"p{j}_tls"
        lines.append(f'extern __thread char {var}[] __attribute__((tls_model("{"initial-exec" if model == "ie" else "global-dynamic"}")));')
        uses.append(f"(int){var}[0]")
    for k, f in enumerate(funcs):
        attrs = []
        if f in hidden:
            attrs.append('visibility("hidden")')
        if f in weak_defs:
            attrs.append("weak")
        a = f"__attribute__(({', '.join(attrs)})) " if attrs else ""
        if f.startswith("PyInit_"):  # no module: the import stops with a SystemError after the load
            lines.append(f"{a}void* {f}(void) {{ return 0; }}")
        elif k == 0 and lib_get(lib, "ifunc") and not attrs:
            lines.append(f"static int impl_{f}(void) {{ return 1; }}")
            lines.append(f"static void* resolve_{f}(void) {{ return (void*)impl_{f}; }}")
            lines.append(f'int {f}(void) __attribute__((ifunc("resolve_{f}")));')
        else:
            lines.append(f"{a}int {f}(void) {{ return {k + 1}; }}")
    m = re.match(r"libp(\d+)", lib["name"])
    index = m.group(1) if m else None
    if index is not None and lib_get(lib, "unique"):
        lines.append(f"int p{index}_unique = 1;")
        lines.append(f'__asm__(".type p{index}_unique, @gnu_unique_object");')
    protected = lib_get(lib, "protected") or variant.get("protected_indirect") or variant.get("protected")
    for d in lib_get(lib, "data"):
        if d in variant.get("drop", []):
            continue
        vis = '__attribute__((visibility("protected"))) ' if protected else ""
        lines.append(f"{vis}int {d} = 7;")
    tls = lib_get(lib, "tls")
    if tls and index is not None:
        if variant.get("nontls"):
            lines.append(f"char p{index}_tls[{tls['size']}] = {{1}};")
        else:
            lines.append(f'__thread char p{index}_tls[{tls["size"]}] __attribute__((tls_model("initial-exec"))) = {{1}};')
    body = " + ".join([f"{f}()" for f in lib.get("calls", [])] +
                      [f"({f} ? {f}() : 0)" for f in lib.get("weak_calls", [])] +
                      [f"{f}()" for f in lib.get("extra_calls", [])] +
                      [d for d in lib_get(lib, "data_uses")] + uses) or "0"
    if lib_get(lib, "program"):
        lines.append("#include <stdio.h>")
        lines.append("int main(void) {")
        lines.append(f"  volatile int r = {body}; (void)r;")
        lines.append('  puts("ok"); FILE* m = fopen("/proc/self/maps", "r"); char l[4096];')
        lines.append("  while (m && fgets(l, sizeof l, m)) fputs(l, stdout);")
        lines.append("  return 0; }")
    else:
        lines.append(f"int use_{lib['name'].split('.')[0].replace('-', '_')}(void) {{ return {body}; }}")
    return "\n".join(lines) + "\n"


def version_script(index, funcs, drop_v2):
    v1 = [funcs[0]]
    v2 = [] if drop_v2 else funcs[1:]
    text = f"P{index}_1 {{ global: {'; '.join(v1)}; local: *; }};\n"
    if v2:
        text += f"P{index}_2 {{ global: {'; '.join(v2)}; }} P{index}_1;\n"
    return text


def version_script_all(index, lib, funcs, drop_v2):
    """The version script of a library with data, TLS and unique objects too (all in the first node)."""
    text = version_script(index, funcs, drop_v2)
    extra = list(lib_get(lib, "data"))
    if lib_get(lib, "tls"):
        extra.append(f"p{index}_tls")
    if lib_get(lib, "unique"):
        extra.append(f"p{index}_unique")
    return text.replace(f"global: {funcs[0]};", f"global: {'; '.join([funcs[0]] + extra)};", 1)


def run(cmd, cwd=None, env=None, timeout=120):
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=timeout)


def ext_suffix():
    r = run([PYTHON, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"])
    return r.stdout.strip()


EXT_SUFFIX = None


def module_paths(world, root):
    """A Python world's module files: the target (pkga's) and the one imported first (pkgb's), or None."""
    global EXT_SUFFIX
    if EXT_SUFFIX is None:
        EXT_SUFFIX = ext_suffix()
    site = os.path.join(root, "site")
    return (os.path.join(site, "pkga", "_exta" + EXT_SUFFIX),
            os.path.join(site, "pkgb", "_extb" + EXT_SUFFIX) if world["python"]["first"] else None)


INIT = """try:
    from . import {module}
except SystemError:
    pass  # loaded: its PyInit returns no module, which is not what is compared
"""


def soname_of(lib, index):
    dst = lib_get(lib, "soname_dst")
    if dst == "platform":
        return f"libp{index}-$PLATFORM.so.1"
    if dst == "origin":
        return f"$ORIGIN/libp{index}.so.1"
    if dst == "cwd":
        return f"./libp{index}.so.1"
    return lib["name"]


def file_name_of(lib, index):
    """The file a (DST-spelled) soname names once expanded."""
    if lib_get(lib, "soname_dst") == "platform":
        return f"libp{index}-{machine()['platform']}.so.1"
    return lib["name"]


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def patch_phdrs(path, from_type, to_type):
    """Every program header of type `from_type` becomes `to_type` (a 64-bit little-endian file)."""
    with open(path, "r+b") as f:
        head = f.read(64)
        phoff = int.from_bytes(head[32:40], "little")
        phentsize = int.from_bytes(head[54:56], "little")
        phnum = int.from_bytes(head[56:58], "little")
        for k in range(phnum):
            f.seek(phoff + k * phentsize)
            if int.from_bytes(f.read(4), "little") == from_type:
                f.seek(phoff + k * phentsize)
                f.write(to_type.to_bytes(4, "little"))


class Builder:
    def __init__(self, world, root):
        self.world, self.root = world, root
        self.built = {}  # lib index -> the path its requirers link against

    def path_flags(self, lib):
        out = []
        if lib["path_kind"] != "none" and lib["path"]:
            elems = [e.replace("@ROOT@", self.root) for e in lib["path"]]
            out.append("-Wl,-rpath," + ":".join(elems))
            out.append("-Wl,--disable-new-dtags" if lib["path_kind"] == "rpath" else "-Wl,--enable-new-dtags")
        return out

    def compile(self, lib, index, out_path, funcs, drop_v2=False, needs=(), variant=None, kind="lib"):
        variant = variant or {}
        os.makedirs(os.path.dirname(out_path), exist_ok=True)
        stem = out_path.replace("/", "_").replace("$", "S").replace(";", "_")[-120:]
        src = os.path.join(self.root, "src", stem + ".c")
        with open(src, "w") as f:
            f.write(c_source(lib, funcs, lib.get("hidden", []), lib.get("weak_defs", []), variant))
        if kind == "prog":
            cmd = ["gcc", "-fno-pic", "-no-pie", "-o", out_path, src, "-Wl,--allow-shlib-undefined"]
        else:
            cmd = ["gcc", "-shared", "-fPIC", "-o", out_path, src, "-Wl,-soname," + (soname_of(lib, index) if index is not None else lib["name"])]
        if index is not None and lib.get("versions") and not variant.get("noversions"):
            vs = os.path.join(self.root, "src", stem + ".map")
            with open(vs, "w") as f:
                f.write(version_script_all(index, lib, funcs, drop_v2))
            cmd.append("-Wl,--version-script=" + vs)
        if variant.get("protected_indirect"):
            cmd.append("-mno-direct-extern-access")
        if variant.get("noversions"):
            cmd.append("-nostdlib")  # no libc, so no .gnu.version at all (libc's versions would bring one)
        cmd += self.path_flags(lib)
        if lib_get(lib, "nodeflib"):
            cmd.append("-Wl,-z,nodefaultlib")
        if lib_get(lib, "noopen"):
            cmd.append("-Wl,-z,nodlopen")
        cmd.append("-Wl,--no-as-needed")
        cmd += [self.built[j] for j in needs]
        r = run(cmd)
        if r.returncode != 0:
            raise RuntimeError(f"gcc failed for {out_path}: {r.stderr}")

    def lib_dirs(self, index):
        """Where the right copy of lib `index` lives: its directory (and subdirectory), or - for a
        $ORIGIN soname - the directory of each object that needs it."""
        lib = self.world["libs"][index]
        if lib_get(lib, "soname_dst") == "origin":
            out = []
            for k, other in enumerate(self.world["libs"]):
                if index in other["needs"]:
                    out.append(os.path.join(self.root, other["dir"]))
            if index in self.world["target"]["needs"]:
                out.append(os.path.dirname(self.target_path()))
            return sorted(set(out)) or [os.path.join(self.root, lib["dir"])]
        return [os.path.join(self.root, lib["dir"], lib_get(lib, "subdir"))]

    def target_path(self):
        t = self.world["target"]
        if self.world.get("python"):
            return module_paths(self.world, self.root)[0]
        if lib_get(t, "program"):
            # Run through a symlink, the program's real file is one level deeper than the link: its
            # $ORIGIN/../dX names another directory than the link's would.
            return os.path.join(self.root, "bin/real" if lib_get(t, "via_symlink") else t["dir"], t["name"])
        return os.path.join(self.root, t["dir"], t["name"])

    def build(self):
        world, root = self.world, self.root
        if os.path.exists(root):
            shutil.rmtree(root)
        for d in world["dirs"] + ["cwd", "src", "site/pkga", "site/pkgb", "bin"]:
            os.makedirs(os.path.join(root, d), exist_ok=True)
        libs = world["libs"]
        for i in reversed(range(len(libs))):
            lib = libs[i]
            places = self.lib_dirs(i)
            fname = file_name_of(lib, i)
            first = None
            for d in places:
                real = os.path.join(d, fname + (".0" if lib["symlink"] else ""))
                if first is None:
                    self.compile(lib, i, real, lib["funcs"], needs=lib["needs"])
                    first = real
                else:
                    os.makedirs(d, exist_ok=True)
                    shutil.copyfile(first, real)
                if lib["symlink"]:
                    os.symlink(os.path.basename(real), os.path.join(d, fname))
            self.built[i] = os.path.join(places[0], fname)
            st = lib.get("stale")
            if st:
                st = dict(STALE_DEFAULTS, **st)
                keep = [f for f in lib["funcs"] if f not in st["drop"]] or [lib["funcs"][0]]
                dst = os.path.join(root, st["dir"], st["sub"], fname)
                self.compile(lib, i, dst + ".stale-tmp", keep, drop_v2=st["drop_v2"], needs=lib["needs"], variant=st)
        self.build_target()
        self.finish()
        return self.built, self.target_path()

    def build_target(self):
        world, root, libs = self.world, self.root, self.world["libs"]
        t = world["target"]
        tpath = self.target_path()
        if world.get("python"):
            tpath, first = module_paths(world, root)
            t = dict(t, name="_exta.so")
            self.compile(t, None, tpath, ["PyInit__exta"], needs=t["needs"])
            init = INIT.format(module="_exta")
            if first:
                # Its libraries' directories in its RUNPATH, so that the import done first mostly works.
                b = dict(world["python"]["first"], name="_extb.so", path_kind="runpath",
                         path=["@ROOT@/" + libs[j]["dir"] for j in world["python"]["first"]["needs"]])
                self.compile(b, None, first, ["PyInit__extb"], needs=b["needs"])
                init = "import pkgb\n" + init
                with open(os.path.join(root, "site", "pkgb", "__init__.py"), "w") as f:
                    f.write(INIT.format(module="_extb"))
            with open(os.path.join(root, "site", "pkga", "__init__.py"), "w") as f:
                f.write(init)
        elif lib_get(t, "program"):
            self.compile(t, None, tpath, [], needs=t["needs"], kind="prog")
            if lib_get(t, "via_symlink"):
                os.symlink(os.path.relpath(tpath, os.path.join(root, t["dir"])), os.path.join(root, t["dir"], t["name"]))
        else:
            self.compile(t, None, tpath, [], needs=t["needs"])

    def finish(self):
        """Stale copies, decoys and missing files only after everything linked against the right ones."""
        root, libs = self.root, self.world["libs"]
        # Patched decoys start from a pristine copy (a decoy may replace the right copy itself).
        self.pristine = {}
        for i, path in self.built.items():
            if os.path.isfile(path):
                self.pristine[i] = os.path.join(root, "src", f"pristine-{i}.so")
                shutil.copyfile(os.path.realpath(path), self.pristine[i])
        for i, lib in enumerate(libs):
            fname = file_name_of(lib, i)
            st = lib.get("stale")
            if st:
                st = dict(STALE_DEFAULTS, **st)
                dst = os.path.join(root, st["dir"], st["sub"], fname)
                if os.path.lexists(dst) and not os.path.isdir(dst):
                    os.remove(dst)
                if not os.path.isdir(dst):
                    os.rename(dst + ".stale-tmp", dst)
            if lib["missing"]:
                for d in self.lib_dirs(i):
                    for name in (fname, fname + ".0"):
                        if os.path.lexists(os.path.join(d, name)):
                            os.remove(os.path.join(d, name))
            for decoy in lib_get(lib, "decoys"):
                self.make_decoy(os.path.join(root, decoy["dir"], decoy["sub"], fname), decoy["kind"], i)
        decoy = self.world.get("libc_decoy")
        if decoy:
            path = os.path.join(root, decoy["dir"], "libc.so.6")
            if not os.path.lexists(path):
                if decoy["kind"] == "stub":
                    stub = {"name": "libc.so.6", "calls": [], "path_kind": "none", "path": []}
                    self.compile(stub, None, path, ["not_libc"])
                else:
                    self.make_decoy(path, decoy["kind"], None)

    def make_decoy(self, path, kind, index):
        if os.path.lexists(path) and not os.path.isdir(path):
            os.remove(path)
        elif os.path.isdir(path):
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        base = getattr(self, "pristine", {}).get(index) if index is not None else None
        if kind == "empty":
            open(path, "w").close()
        elif kind == "text":
            with open(path, "w") as f:
                f.write("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 1048576\n")
        elif kind == "short":
            with open(path, "wb") as f:
                f.write(b"\x7fELF\x02\x01\x01")
        elif kind == "dir":
            os.makedirs(path)
        elif kind == "loop":
            os.symlink(os.path.basename(path), path)
        elif kind in ("rel", "exec", "pie"):
            src = path + ".c"
            with open(src, "w") as f:
                f.write("int main(void) { return 0; }\n")
            flags = {"rel": ["-c", "-fPIC"], "exec": ["-no-pie", "-fno-pic"], "pie": ["-pie", "-fPIE"]}[kind]
            r = run(["gcc"] + flags + ["-o", path, src])
            os.remove(src)
            if r.returncode != 0:
                raise RuntimeError(f"gcc failed for decoy {path}: {r.stderr}")
        else:
            if base is None or not os.path.exists(base):
                open(path, "w").close()
                return
            shutil.copyfile(os.path.realpath(base), path)
            edits = {"be": (5, b"\x02"), "osabi": (7, b"\x09"), "abiver": (8, b"\x01"), "pad": (12, b"\x01"),
                     "machine": (18, (183).to_bytes(2, "little")), "class32": (4, b"\x01"),
                     "eversion": (20, b"\x02"), "phentsize": (54, (40).to_bytes(2, "little"))}
            if kind in edits:
                patch(path, *edits[kind])
            elif kind == "nodyn":
                patch_phdrs(path, 2, 0)  # PT_DYNAMIC -> PT_NULL
            elif kind == "noload":
                patch_phdrs(path, 1, 0)  # PT_LOAD -> PT_NULL


def llp_value(world, root):
    return ":".join("" if e == "" else os.path.join(root, e) for e in world["ld_library_path"])


# ---------------------------------------------------------------------------------------------------
# The real loader's verdict.

HOST_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
/* argv: [g:|l:|t:]path...: preloads (RTLD_GLOBAL, RTLD_LOCAL), then the target. Prints "ok" and
   /proc/self/maps, or "error: <stage> " and dlerror(). */
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* path = argv[i] + 2;
    int mode = RTLD_NOW | (argv[i][0] == 'g' ? RTLD_GLOBAL : RTLD_LOCAL);
    fprintf(stderr, "stage: %c\n", argv[i][0]);
    if (!dlopen(path, mode)) { printf("error: %c %s\n", argv[i][0], dlerror()); return 1; }
  }
  printf("ok\n");
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[8192];
  while (maps && fgets(line, sizeof line, maps)) fputs(line, stdout);
  return 0;
}
"""

HOST = None
HOST_LOCK = threading.Lock()


def host(work):
    global HOST
    with HOST_LOCK:
        if HOST is None:
            os.makedirs(work, exist_ok=True)
            src = os.path.join(work, "host.c")
            with open(src, "w") as f:
                f.write(HOST_C)
            out = os.path.join(work, "host")
            r = run(["gcc", "-O1", "-o", out, src])
            if r.returncode != 0:
                raise RuntimeError("the C host does not build: " + r.stderr)
            HOST = out
    return HOST


IMPORT = r"""
import json, sys
import os
out = {"stage": "preload", "ok": True, "err": "", "maps": []}
print("stage: l", file=sys.stderr, flush=True)
try:
    if any(os.path.isdir(os.path.join(p, "pkgb")) for p in sys.path if p):
        import pkgb  # what the tool is told was loaded before (--with ...:local), on its own first
    out["stage"] = "target"
    print("stage: t", file=sys.stderr, flush=True)
    import pkga
except ImportError as e:
    out["ok"] = False
    out["err"] = str(e)
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split(None, 5)
        if len(parts) == 6:
            out["maps"].append(parts[5].strip())
print(json.dumps(out))
"""


def parse_debug(text):
    """LD_DEBUG=files,libs: each name the loader mapped, with the file it mapped for it (the last file
    tried before "generating link map"; the name itself when no search ran), and each name it searched
    for, with the last file it tried (a refused file is tried, never mapped)."""
    mapped, last_tried, tried, searching = {}, {}, None, None
    for line in text.splitlines():
        line = line.split(":", 1)[1].strip() if re.match(r"^\s*\d+:", line) else line.strip()
        m = re.match(r"find library=(.*) \[\d+\]; searching", line)
        if m:
            searching, tried = m.group(1), None
            continue
        m = re.match(r"trying file=(.*)$", line)
        if m:
            tried = m.group(1)
            if searching:
                last_tried[searching] = tried
            continue
        m = re.match(r"file=(.*) \[\d+\];\s+generating link map", line)
        if m:
            name = m.group(1)
            mapped[name] = tried if (searching == name and tried) else name
            searching, tried = None, None
    return mapped, last_tried


def real_verdict(world, root, built, tpath, work):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = llp_value(world, root)
    env.pop("GLIBC_TUNABLES", None)
    if world.get("tunables"):
        env["GLIBC_TUNABLES"] = world["tunables"]
    cwd = os.path.join(root, world["cwd"])
    if world.get("python"):
        env["PYTHONPATH"] = os.path.join(root, "site")
        r = run([PYTHON, "-c", IMPORT], cwd=cwd, env=env)
        if r.returncode != 0:  # ld.so ended the process (an assertion, a signal)
            stages = re.findall(r"^stage: (.)$", r.stderr, re.M)
            lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("stage: ")]
            err = "\n".join(lines).strip() if r.returncode > 0 else f"killed by signal {-r.returncode}"
            return {"stage": "preload" if stages[-1:] == ["l"] else "target", "ok": False, "err": err,
                    "cause": parse_message(err), "maps": [], "mapped": {}}
        v = json.loads(r.stdout)
        v["cause"] = parse_message(v["err"]) if not v["ok"] else None
        v["maps"] = sorted({os.path.realpath(m) for m in v["maps"] if m.startswith(root + "/")})
        v["mapped"] = {}
        return v
    env["LD_DEBUG"] = "files,libs"
    t = world["target"]
    if lib_get(t, "program"):
        env["LD_BIND_NOW"] = "1"
        cmd = [os.path.join(root, t["dir"], t["name"])]
    else:
        cmd = [host(work)]
        for p in world["preloads"]:
            cmd.append(("g:" if p["global"] else "l:") + preload_path(world, root, built, p))
        cmd.append("t:" + tpath)
    r = run(cmd, cwd=cwd, env=env)
    out = r.stdout.splitlines()
    mapped, tried = parse_debug(r.stderr)
    v = {"stage": "target", "ok": False, "err": "", "maps": [], "mapped": mapped, "tried": tried}
    if r.returncode == 0 and out and out[0] == "ok":
        v["ok"] = True
        for line in out[1:]:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith(root + "/"):
                v["maps"].append(parts[5].strip())
        v["maps"] = sorted({os.path.realpath(m) for m in v["maps"]})
    elif out and out[0].startswith("error: "):
        v["stage"] = {"g": "preload", "l": "preload", "t": "target"}[out[0][7]]
        v["err"] = out[0][9:]
    elif r.returncode < 0:
        v["err"] = f"killed by signal {-r.returncode}"
        stages = re.findall(r"^stage: (.)$", r.stderr, re.M)
        if stages and stages[-1] in "gl":
            v["stage"] = "preload"
    else:
        # The message goes to stderr: a program's "error while loading shared libraries", an assertion.
        lines = [ln for ln in r.stderr.splitlines() if not re.match(r"^\s*\d+:", ln) and not ln.startswith("stage: ")
                 and not ln.startswith("warning: ") and "no version information available" not in ln]
        v["err"] = "\n".join(lines).strip()
        stages = re.findall(r"^stage: (.)$", r.stderr, re.M)
        if stages and stages[-1] in "gl":
            v["stage"] = "preload"
    v["cause"] = None if v["ok"] else parse_message(v["err"])
    return v


BAD_FILE = ["file too short", "invalid ELF header", "cannot read file data", "ELF file data encoding not little-endian",
            "ELF file version ident does not match current one", "ELF file OS ABI invalid", "ELF file ABI version invalid",
            "nonzero padding in e_ident", "ELF file version does not match current one",
            "only ET_DYN and ET_EXEC can be loaded", "ELF file's phentsize not the expected size",
            "object file has no loadable segments", "cannot dynamically load executable",
            "object file has no dynamic section", "cannot dynamically load position-independent executable"]


def parse_message(err):
    """The cause a loader message names, as a tuple whose first item is its kind; ("unknown", err) when
    the tester does not understand it (a disagreement of its own). A message of several lines (a
    program's start lists every version node missing before it gives up) is read line by line."""
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    if len(lines) > 1:
        for line in lines:
            cause = parse_message(line)
            if cause[0] != "unknown":
                return cause
        return ("unknown", err.strip())
    e = err.strip()
    e = re.sub(r"^\S+: (error while loading shared libraries|symbol lookup error|relocation error): ", "", e)
    m = re.match(r"^\S+: (\S+: version `[^']+' not found \(required by .*\))$", e)
    if m:  # a program's start: "PROG: FILE: version `V' not found (required by X)"
        e = m.group(1)
    if e.startswith("killed by signal 8"):
        return ("sigfpe",)
    m = re.search(r"Inconsistency detected by ld\.so: ([\w.-]+): \d+: (\w+): Assertion", e)
    if m:
        return ("abort", m.group(1), m.group(2))
    m = re.match(r"^(.*): undefined symbol: ([^,\s]+)(?:, version (\S+))?$", e)
    if m:
        return ("undefined", m.group(2), m.group(3), m.group(1))
    m = re.match(r"^(.*): cannot open shared object file(?:: [^:]+)?$", e)
    if m:
        return ("missing", m.group(1))
    m = re.match(r"^(.*): wrong ELF class: ELFCLASS(32|64)$", e)
    if m:
        return ("missing", m.group(1))
    m = re.match(r"^(.*): version `([^']+)' not found \(required by (.*)\)$", e)
    if m:
        return ("version", m.group(2), m.group(1), m.group(3))
    m = re.match(r"^(.*): shared object cannot be dlopen\(\)ed$", e)
    if m:
        return ("noopen", m.group(1))
    m = re.match(r"^(.*): cannot allocate memory in static TLS block$", e)
    if m:
        return ("static-tls", m.group(1))
    parts = e.split(": ")
    if len(parts) >= 3 and parts[-1] == "error due to GNU_PROPERTY_1_NEEDED_INDIRECT_EXTERN_ACCESS":
        return ("protected", parts[-3], parts[-2])
    m = re.match(r"^(.*): CPU ISA level is lower than required$", e)
    if m:
        return ("isa", m.group(1))
    for words in BAD_FILE:
        m = re.match(r"^(.*?): (" + re.escape(words) + r"(?:: .*)?)$", e)
        if m:
            return ("bad-file", m.group(1), m.group(2))
    return ("unknown", e)


# ---------------------------------------------------------------------------------------------------
# The tool's verdict.


def preload_path(world, root, built, p):
    lib = world["libs"][p["lib"]]
    if p.get("renamed"):
        return os.path.join(root, "pre", file_name_of(lib, p["lib"]))
    return built[p["lib"]]


def tool_verdict(world, root, built, tpath, linkcheck, closure=False):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = llp_value(world, root)
    env.pop("GLIBC_TUNABLES", None)
    if world.get("tunables"):
        env["GLIBC_TUNABLES"] = world["tunables"]
    cmd = [linkcheck, "--format", "json", "--no-cache", "--cuda-home", ""]
    for p in world["preloads"]:
        cmd += ["--with", preload_path(world, root, built, p) + ("" if p["global"] else ":local")]
    if world.get("python"):
        env["PYTHONPATH"] = os.path.join(root, "site")
        cmd.append("--python=" + PYTHON)
        first = module_paths(world, root)[1]
        if first:
            cmd += ["--with", first + ":local"]
    if closure:
        cmd.append("--closure")
    t = world["target"]
    cmd.append(os.path.join(root, t["dir"], t["name"]) if lib_get(t, "program") else tpath)
    r = run(cmd, cwd=os.path.join(root, world["cwd"]), env=env)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = None
    return r.returncode, doc, r.stderr


PLATFORM_UNDER = {}


def platform_under(tunables):
    """glibc's dl_platform with the world's GLIBC_TUNABLES (glibc.cpu.hwcaps=-AVX2 makes a haswell CPU's
    platform x86_64), from ld.so --list-diagnostics (glibc 2.33 on); the machine's otherwise."""
    if not tunables:
        return machine()["platform"]
    if tunables not in PLATFORM_UNDER:
        platform = machine()["platform"]
        env = dict(os.environ, GLIBC_TUNABLES=tunables)
        d = subprocess.run([LDSO, "--list-diagnostics"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, env=env)
        for line in d.stdout.splitlines():
            if line.startswith('dl_platform="') and line.endswith('"'):
                platform = line[len('dl_platform="'):-1]
        PLATFORM_UNDER[tunables] = platform
    return PLATFORM_UNDER[tunables]


def expand_name(name, origin, platform=None):
    """A DT_NEEDED name as the loader expands it (dl-load.c _dl_dst_substitute)."""
    platform = platform or machine()["platform"]
    name = re.sub(r"\$(\{ORIGIN\}|ORIGIN)(?![A-Za-z0-9_])", lambda m: origin, name)
    name = re.sub(r"\$(\{PLATFORM\}|PLATFORM)(?![A-Za-z0-9_])", lambda m: platform, name)
    return re.sub(r"\$(\{LIB\}|LIB)(?![A-Za-z0-9_])", lambda m: "lib/x86_64-linux-gnu", name)


def tool_causes(doc, platform=None, program=None):
    """What the tool's report names: every cause, in the terms parse_message uses. A program's $ORIGIN
    is the directory of its real file (the kernel's, by /proc/self/exe), wherever the report's path
    (a symlink to it) lies; a library's is the directory of the path it was opened by."""
    causes = []
    for lib in doc["libraries"]:
        origin = os.path.dirname(lib["path"])
        if program and os.path.realpath(lib["path"]) == os.path.realpath(program):
            origin = os.path.dirname(os.path.realpath(program))
        for u in lib["unresolved"]:
            causes.append(("undefined", u["symbol"], u.get("version"), lib["path"]))
        for n in lib["needed"]:
            if n["path"] is None and not n.get("refused"):
                causes.append(("missing", expand_name(n["name"], origin, platform)))
        for v in lib["missing_versions"]:
            causes.append(("version", v["version"], v.get("provider") or v["file"], lib["path"]))
        for f in lib.get("load_failures", []):
            causes.append(("failure", f["kind"], f.get("file"), f.get("message"), lib["path"]))
    return causes


def relative_paths(doc):
    """The paths of a report that are not absolute (the contract says they all are)."""
    out = []
    for lib in doc["libraries"]:
        paths = [lib["path"]] + [f["file"] for f in lib.get("load_failures", [])]
        for n in lib["needed"]:
            paths += [n["path"]] if n["path"] else [s["path"] for s in n.get("search", []) if s["path"][:1] != "("]
        out += [p for p in paths if p and not p.startswith("/")]
    return out


def same_file(a, b, cwd):
    if not a or not b:
        return False
    a = a if a.startswith("/") else os.path.join(cwd, a)
    b = b if b.startswith("/") else os.path.join(cwd, b)
    return os.path.realpath(a) == os.path.realpath(b) or os.path.normpath(a) == os.path.normpath(b)


def cause_named(cause, causes, cwd, tried=None):
    """Whether the tool names the loader's cause. glibc names a refused file by the name it searched
    for (libp0.so.1: shared object cannot be dlopen()ed): that name is the file it tried last for it
    (LD_DEBUG, `tried`); only where no search was seen (a Python world) does the name alone decide."""
    kind = cause[0]

    def same(path, named):
        if "/" in named:
            return same_file(path, named, cwd)
        if tried and named in tried:
            return same_file(path, tried[named], cwd)
        return bool(path) and os.path.basename(path) == named

    if kind == "undefined":
        _, sym, ver, where = cause
        return any(c[0] == "undefined" and c[1] == sym and c[2] == ver and same_file(c[3], where, cwd) for c in causes)
    if kind == "missing":
        return any(c[0] == "missing" and (c[1] == cause[1] or same_file(c[1], cause[1], cwd)) for c in causes)
    if kind == "version":
        _, ver, provider, req = cause
        return any(c[0] == "version" and c[1] == ver and same_file(c[2], provider, cwd) and same_file(c[3], req, cwd)
                   for c in causes)
    failure = {"bad-file": "bad-candidate", "noopen": "noopen", "static-tls": "static-tls", "sigfpe": "tls-mismatch",
               "protected": "protected-copy", "isa": "isa-level"}
    if kind in failure:
        for c in causes:
            if c[0] != "failure" or c[1] != failure[kind]:
                continue
            if kind == "bad-file":
                if same(c[2], cause[1]) and c[3] == cause[2]:
                    return True
            elif kind in ("noopen", "static-tls", "isa"):
                if same(c[2], cause[1]):
                    return True
            else:
                return True
        return False
    if kind == "abort":
        want = {"dl-version.c": "version-file-unmatched", "dl-lookup.c": "version-without-versym"}.get(cause[1])
        return any(c[0] == "failure" and c[1] == want for c in causes)
    return False


def loader_undefined(world, root, tpath):
    """Every undefined symbol the real loader meets binding the target and all it loads at once, as
    (symbol, version, requiring file) with the file's real path: what `ldd -r` prints (ld.so with
    LD_TRACE_LOADED_OBJECTS, LD_BIND_NOW and LD_WARN). None for a world whose process ldd -r does not
    reproduce: a preload or an import first, tunables."""
    if world["preloads"] or world.get("python") or world.get("tunables"):
        return None
    env = dict(os.environ, LD_TRACE_LOADED_OBJECTS="1", LD_BIND_NOW="1", LD_WARN="yes")
    env["LD_LIBRARY_PATH"] = llp_value(world, root)
    env.pop("LD_PRELOAD", None)
    cwd = os.path.join(root, world["cwd"])
    r = run([LDSO, tpath], cwd=cwd, env=env)
    if r.returncode != 0 or "Inconsistency detected" in r.stderr:
        return None  # ld.so stopped part way (an assertion): what it printed is not every symbol
    out = set()
    for line in (r.stdout + r.stderr).splitlines():
        m = re.match(r"^\s*undefined symbol: ([^,\s]+)(?:, version (\S+))?\s+\((.*)\)$", line)
        if m:
            out.add((m.group(1), m.group(2), os.path.realpath(os.path.join(cwd, m.group(3)))))
    return out


CAUSES = {}  # what the real loader said, over every world compared (shrinking's included)
WHOLE_SETS = [0]  # the worlds whose whole undefined set ldd -r gave and the tool's was compared with
CAUSES_LOCK = threading.Lock()


def compare(world, root, linkcheck, work):
    """None when the tool agrees with the loader, else (class, detail)."""
    built, tpath = Builder(world, root).build()
    for p in world["preloads"]:
        if p.get("renamed"):
            lib = world["libs"][p["lib"]]
            dst = os.path.join(root, "pre", file_name_of(lib, p["lib"]))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            b = Builder(dict(world), root)
            b.built = built
            renamed = dict(lib, name=f"libp{p['lib']}-pre.so.1", soname_dst=None)
            b.compile(renamed, p["lib"], dst, lib["funcs"], needs=lib["needs"])
    real = real_verdict(world, root, built, tpath, work)
    with CAUSES_LOCK:
        kind = "loads" if real["ok"] else real["cause"][0] if real["cause"][0] != "abort" else "abort:" + real["cause"][1]
        CAUSES[kind] = CAUSES.get(kind, 0) + 1
    if real["stage"] == "preload" and not real["ok"]:
        return "invalid", f"a preload fails by itself: {real['err'][:200]}"
    # Without preloads or an import done first, the default check and --closure check the same objects:
    # one run serves both.
    alone = not world["preloads"] and not world.get("python")
    status, doc, err = tool_verdict(world, root, built, tpath, linkcheck, closure=alone)
    if status not in (0, 1) or doc is None:
        return "tool-error", f"exit {status}: {err.strip()[:300]}"
    relative = relative_paths(doc)
    if real["ok"] != (status == 0):
        return ("false-green" if status == 0 else "false-red"), f"loader: {real['err'] or 'loads'}; tool exit {status}"
    cwd = os.path.join(root, world["cwd"])
    if not real["ok"]:
        cause = real["cause"]
        if cause[0] == "unknown":
            return "unknown-message", f"loader: {real['err'][:300]}"
        program = tpath if world.get("python") is None and lib_get(world["target"], "program") else None
        causes = tool_causes(doc, platform_under(world.get("tunables")), program)
        if not cause_named(cause, causes, cwd, real.get("tried")):
            return "wrong-cause", f"loader: {real['err'][:300]}; tool: {causes[:8]}"
        # Not one cause among others: every undefined symbol the tool names is one the loader meets,
        # and it names them all (where ldd -r reproduces the process).
        if cause[0] == "undefined":
            want = loader_undefined(world, root, tpath)
            got = {(c[1], c[2], os.path.realpath(os.path.join(cwd, c[3]))) for c in causes if c[0] == "undefined"}
            if want:
                with CAUSES_LOCK:
                    WHOLE_SETS[0] += 1
                if got != want:
                    return "wrong-cause", f"ldd -r: {sorted(want)[:6]}; tool: {sorted(got)[:6]}"
    # The copies mapped are the copies the tool picked: all of them when it loads, those mapped
    # before the failure when it does not.
    if not alone:
        status, doc, err = tool_verdict(world, root, built, tpath, linkcheck, closure=True)
    if doc is None:
        return "tool-error", f"--closure exit {status}: {err.strip()[:300]}"
    picked, by_name = set(), {}
    for lib in doc["libraries"]:
        picked.add(os.path.realpath(lib["path"]))
        origin = os.path.dirname(lib["path"])
        for n in lib["needed"]:
            # A refused file was mapped too (_dl_map_object_from_fd refuses some after mapping).
            path = n["path"] or n.get("refused")
            if path:
                p = os.path.realpath(path if path.startswith("/") else os.path.join(cwd, path))
                picked.add(p)
                by_name.setdefault(expand_name(n["name"], origin, platform_under(world.get("tunables"))), set()).add(p)
    if real["ok"]:
        picked = sorted(p for p in picked if p.startswith(root + "/"))
        if world.get("python") is None and lib_get(world["target"], "program"):
            picked = [p for p in picked if p != os.path.realpath(tpath)]
            maps = [m for m in real["maps"] if m != os.path.realpath(tpath)]
        else:
            maps = real["maps"]
        if picked != maps:
            return "wrong-copy", f"loader mapped {maps}; tool picked {picked}"
        return relative_disagreement(relative)
    for name, path in real["mapped"].items():
        full = os.path.realpath(path if path.startswith("/") else os.path.join(cwd, path))
        if not full.startswith(root + "/") or "/pre/" in full:
            continue
        if full not in by_name.get(name, set()) and full not in picked:
            return "wrong-copy", f"loader mapped {full} for {name} before failing; tool picked {sorted(by_name.get(name, []))}"
    return relative_disagreement(relative)


def relative_disagreement(relative):
    """The last check, once the verdict, the cause and the copies agree: every path is absolute."""
    if relative:
        return "relative-path", f"the report's paths are absolute (docs/contract.md), yet: {relative[:3]}"
    return None


# ---------------------------------------------------------------------------------------------------
# Shrinking: drop one part at a time while the disagreement stays of the same class.


def candidates(world):
    w = world
    for k in range(len(w["preloads"])):
        c = copy.deepcopy(w); del c["preloads"][k]; yield c
    for k in range(len(w["ld_library_path"])):
        c = copy.deepcopy(w); del c["ld_library_path"][k]; yield c
    for key in ("tunables", "libc_decoy"):
        if w.get(key):
            c = copy.deepcopy(w); del c[key]; yield c
    for key in ("weak_calls", "extra_calls", "calls", "path", "data_uses", "tls_uses"):
        for k in range(len(w["target"].get(key, []))):
            c = copy.deepcopy(w); del c["target"][key][k]; yield c
    if lib_get(w["target"], "via_symlink"):
        c = copy.deepcopy(w); c["target"]["via_symlink"] = False; yield c
    if w.get("python") and w["python"]["first"]:
        c = copy.deepcopy(w); c["python"]["first"] = None; yield c
        for k in range(len(w["python"]["first"]["calls"])):
            c = copy.deepcopy(w); del c["python"]["first"]["calls"][k]; yield c
    if w.get("python"):
        c = copy.deepcopy(w); del c["python"]; yield c
    if w["target"]["path_kind"] != "none":
        c = copy.deepcopy(w); c["target"]["path_kind"] = "none"; yield c
    for i, lib in enumerate(w["libs"]):
        for key in ("calls", "path", "hidden", "weak_defs", "decoys", "tls_uses", "data"):
            for k in range(len(lib.get(key, []))):
                c = copy.deepcopy(w); del c["libs"][i][key][k]; yield c
        for flag in ("symlink", "missing", "versions", "nodeflib", "noopen", "ifunc", "unique", "protected"):
            if lib.get(flag):
                c = copy.deepcopy(w); c["libs"][i][flag] = False; yield c
        for key, empty in (("soname_dst", None), ("subdir", ""), ("tls", None)):
            if lib.get(key):
                c = copy.deepcopy(w); c["libs"][i][key] = empty; yield c
        if lib["stale"]:
            c = copy.deepcopy(w); c["libs"][i]["stale"] = None; yield c
        if lib["path_kind"] != "none":
            c = copy.deepcopy(w); c["libs"][i]["path_kind"] = "none"; yield c
        for k in range(len(lib["needs"])):
            c = copy.deepcopy(w)
            j = c["libs"][i]["needs"].pop(k)
            c["libs"][i]["calls"] = [f for f in c["libs"][i]["calls"] if f not in w["libs"][j]["funcs"]]
            c["libs"][i]["tls_uses"] = [u for u in lib_get(c["libs"][i], "tls_uses") if u[0] != j]
            yield c
    if w["cwd"] != "cwd":
        c = copy.deepcopy(w); c["cwd"] = "cwd"; yield c


def shrink(world, klass, root, linkcheck, work):
    current = world
    progress = True
    while progress:
        progress = False
        for c in candidates(current):
            try:
                got = compare(c, root, linkcheck, work)
            except Exception:  # a candidate that does not build is not a smaller case
                continue
            if got and got[0] == klass:
                current = c
                progress = True
                break
    return current


# ---------------------------------------------------------------------------------------------------


def features_of(world):
    """The features a world holds (for the per-feature figures)."""
    out = []
    libs, t = world["libs"], world["target"]
    if any(lib_get(lb, "subdir") or (lb.get("stale") or {}).get("sub") for lb in libs):
        out.append("hwcaps")
    if any("$" in d for d in world["dirs"]):
        out.append("unknown_token")
    if any(";" in d for d in world["dirs"]):
        out.append("semicolon")
    if any(lib_get(lb, "soname_dst") in ("platform", "origin") for lb in libs):
        out.append("dst_needed")
    if any(lib_get(lb, "soname_dst") == "cwd" for lb in libs):
        out.append("cwd_needed")
    if world.get("libc_decoy"):
        out.append("nodeflib_libc")
    if any(lib_get(lb, "decoys") for lb in libs):
        out.append("decoy")
    if any(lib_get(lb, "noopen") for lb in libs):
        out.append("noopen")
    if any(lib_get(lb, "tls") for lb in libs):
        out.append("static_tls")
    if any((lb.get("stale") or {}).get("nontls") for lb in libs):
        out.append("tls_mismatch")
    if any((lb.get("stale") or {}).get("noversions") for lb in libs):
        out.append("noversym")
    if any(p.get("renamed") for p in world["preloads"]):
        out.append("preload_name")
    if lib_get(t, "program"):
        out.append("program")
    if lib_get(t, "data_uses"):
        out.append("copy_reloc")
    if any(lib_get(lb, "ifunc") or lib_get(lb, "unique") or lib_get(lb, "protected") for lb in libs):
        out.append("definitions")
    if world.get("python"):
        out.append("python")
    if world.get("tunables"):
        out.append("tunables")
    return out or ["classic"]


def check_one(args, label, world):
    root = os.path.join(args.work, label)
    try:
        got = compare(world, root, args.linkcheck, args.work)
        if got and got[0] not in ("invalid",):
            small = shrink(world, got[0], root, args.linkcheck, args.work) if args.shrink else world
            detail = compare(small, root, args.linkcheck, args.work)
            return label, got[0], detail[1] if detail else got[1], small, world
        return label, got[0] if got else None, got[1] if got else None, None, world
    except Exception as e:  # noqa: BLE001 - a world that cannot be built is a tester bug, said as such
        return label, "build-error", str(e)[:400], world, world
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--linkcheck", required=True)
    ap.add_argument("--work", required=True, help="a scratch directory (removed at the end)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--first", type=int, default=0,
                    help="the first world's number (a campaign resumed: --first 13600 --count 6400)")
    ap.add_argument("--worlds", help="comma-separated world numbers to check instead of a range (worlds to run again)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--replay", help="a directory of saved worlds (*.json), checked before the generated ones")
    ap.add_argument("--save", help="where to save each disagreement, shrunk")
    ap.add_argument("--feature", choices=FEATURES, help="give every generated world this feature (and no other)")
    ap.add_argument("--no-shrink", dest="shrink", action="store_false")
    args = ap.parse_args()
    args.linkcheck = os.path.abspath(args.linkcheck)
    args.work = os.path.abspath(args.work)
    if not os.access(args.linkcheck, os.X_OK):
        print(f"difftest: {args.linkcheck}: not an executable", file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)
    started = time.time()
    jobs = []
    if args.replay:
        for name in sorted(os.listdir(args.replay)):
            if name.endswith(".json"):
                with open(os.path.join(args.replay, name)) as f:
                    jobs.append((f"replay-{name[:-5]}", json.load(f)))
    numbers = [int(w) for w in args.worlds.split(",") if w] if args.worlds else range(args.first, args.first + args.count)
    for k in numbers:
        jobs.append((f"s{args.seed}-w{k}", generate(random.Random(f"{args.seed}:{k}"), args.feature)))
    counts, by_feature, failed = {}, {}, []
    set_aside = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for label, klass, detail, small, world in pool.map(lambda j: check_one(args, *j), jobs):
            counts[klass or "agree"] = counts.get(klass or "agree", 0) + 1
            for f in features_of(world):
                seen = by_feature.setdefault(f, [0, 0])
                seen[0] += 1
                seen[1] += 1 if klass and klass != "invalid" else 0
            if klass == "invalid":
                set_aside += 1
                print(f"SET ASIDE {label}: {detail}", flush=True)
            elif klass:
                failed.append(label)
                print(f"DISAGREE {label}: {klass}: {detail}", flush=True)
                if args.save and small is not None:
                    os.makedirs(args.save, exist_ok=True)
                    with open(os.path.join(args.save, f"{label}-{klass}.json"), "w") as f:
                        json.dump(small, f, indent=1, sort_keys=True)
                        f.write("\n")
    shutil.rmtree(args.work, ignore_errors=True)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"difftest: {len(jobs)} worlds (seed {args.seed}) in {time.time() - started:.0f} s: {summary}")
    print("by feature (worlds, disagreements): " +
          ", ".join(f"{f} {v[0]}/{v[1]}" for f, v in sorted(by_feature.items())))
    print("the real loader's verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(CAUSES.items())))
    print(f"whole undefined sets compared with ldd -r's: {WHOLE_SETS[0]}")
    print(f"{len(jobs) - len(failed) - set_aside} passed, {len(failed)} failed, {set_aside} set aside")
    if set_aside > SET_ASIDE_LIMIT * len(jobs):
        print(f"difftest: {set_aside} of {len(jobs)} worlds set aside (a preload or first import fails by itself): "
              f"more than {SET_ASIDE_LIMIT:.0%}, so the run measures too little", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
