#!/usr/bin/env python3
"""Differential tester: generated environments, musa-linkcheck's verdict against the real loader's.

Like Csmith for compilers, it generates small worlds (issue 24): graphs of C libraries built with gcc
at run time, with DT_NEEDED, DT_RPATH or DT_RUNPATH ($ORIGIN, empty elements, absolute), symbol
versions (a version script; a stale copy lacking a node), hidden and weak definitions, weak undefined
references, stale copies shadowing the right one, symlinked sonames, missing files, LD_LIBRARY_PATH
with empty entries anywhere (the current directory, which is set too), and libraries loaded before
with RTLD_GLOBAL or RTLD_LOCAL (--with LIB, --with LIB:local). Each world is loaded by the real loader
(ctypes.CDLL(path, RTLD_NOW) in a fresh /usr/bin/python3) and checked by musa-linkcheck, and three
things are compared: whether the load fails; what the loader names (the undefined symbol, the
library not found, the version not found) against what the tool reports; and, when it loads, which
copy of each library was mapped (/proc/self/maps) against the files the tool's load picked.

A disagreement is shrunk (each part of the world dropped in turn while the disagreement stays) and
saved as a JSON description that --replay rebuilds from source and checks again.

Usage: difftest.py --linkcheck BIN --work DIR [--seed S] [--count N] [--jobs J] [--replay DIR]
                   [--save DIR]
Exit status: 0 when every world agreed, 1 when one did not (each printed), 2 on a usage error.
Seeded and reproducible: world K of seed S is always the same world.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import random
import shutil
import subprocess
import sys

PYTHON = "/usr/bin/python3"

# ---------------------------------------------------------------------------------------------------
# Generation: a world is plain data (JSON), so a saved one replays exactly.


def generate(rng):
    """One world: providers p0..pn-1 (p_i may need p_j, j > i), a target needing some of them."""
    n = rng.randint(1, 4)
    dirs = ["d0", "d1", "d2", "d3"]
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
            "stale": None,  # {"dir": ..., "drop": [funcs], "drop_v2": bool}
        }
        libs.append(lib)
    for i, lib in enumerate(libs):
        for j in lib["needs"]:
            for f in libs[j]["funcs"]:
                if rng.random() < 0.5:
                    lib["calls"].append(f)
        lib["path"] = gen_path(rng, dirs)
        if rng.random() < 0.25:
            others = [d for d in dirs if d != lib["dir"]]
            lib["stale"] = {"dir": rng.choice(others),
                            "drop": [f for f in lib["funcs"] if rng.random() < 0.5],
                            "drop_v2": lib["versions"] and rng.random() < 0.5}
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
    preloads = []
    if rng.random() < 0.3:
        j = rng.randrange(n)
        preloads.append({"lib": j, "global": rng.random() < 0.5})
    world = {"dirs": dirs, "libs": libs, "target": target, "ld_library_path": llp,
             "cwd": rng.choice(dirs + ["cwd"]), "preloads": preloads}
    # A Python world: the target is the extension module of package pkga, whose __init__ may import
    # package pkgb (its own extension, linking other libraries) first; Python imports each with
    # RTLD_LOCAL, which the tool is told as --python and --with PKGB_EXT:local.
    if rng.random() < 0.3:
        world["preloads"] = []
        first = None
        if rng.random() < 0.6:
            first = {"needs": sorted(rng.sample(range(n), rng.randint(1, n))), "calls": []}
            for j in first["needs"]:
                first["calls"] += [f for f in libs[j]["funcs"] if rng.random() < 0.5]
        world["python"] = {"first": first}
    return world


def gen_path(rng, dirs):
    out = []
    for _ in range(rng.randint(0, 3)):
        d = rng.choice(dirs)
        out.append(rng.choice(["$ORIGIN", f"$ORIGIN/../{d}", "@ROOT@/" + d, "", "${ORIGIN}/../" + d]))
    return out


# ---------------------------------------------------------------------------------------------------
# Building a world from its description, under `root`.


def c_source(lib, funcs, hidden, weak_defs):
    lines = []
    for f in lib.get("calls", []):
        lines.append(f"extern int {f}(void);")
    for f in lib.get("weak_calls", []):
        lines.append(f"extern int {f}(void) __attribute__((weak));")
    for f in lib.get("extra_calls", []):
        lines.append(f"extern int {f}(void);")
    for k, f in enumerate(funcs):
        attrs = []
        if f in hidden:
            attrs.append('visibility("hidden")')
        if f in weak_defs:
            attrs.append("weak")
        a = f"__attribute__(({', '.join(attrs)})) " if attrs else ""
        if f.startswith("PyInit_"):  # no module: the import stops with a SystemError after the load
            lines.append(f"{a}void* {f}(void) {{ return 0; }}")
        else:
            lines.append(f"{a}int {f}(void) {{ return {k + 1}; }}")
    body = " + ".join([f"{f}()" for f in lib.get("calls", [])] +
                      [f"({f} ? {f}() : 0)" for f in lib.get("weak_calls", [])] +
                      [f"{f}()" for f in lib.get("extra_calls", [])]) or "0"
    lines.append(f"int use_{lib['name'].split('.')[0]}(void) {{ return {body}; }}")
    return "\n".join(lines) + "\n"


def version_script(index, funcs, drop_v2):
    v1 = [funcs[0]]
    v2 = [] if drop_v2 else funcs[1:]
    text = f"P{index}_1 {{ global: {'; '.join(v1)}; local: *; }};\n"
    if v2:
        text += f"P{index}_2 {{ global: {'; '.join(v2)}; }} P{index}_1;\n"
    return text


def run(cmd, cwd=None, env=None):
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=120)


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


def build_world(world, root):
    """Builds every library; returns {lib index: path of the right copy} and the target's path."""
    if os.path.exists(root):
        shutil.rmtree(root)
    for d in world["dirs"] + ["cwd", "src", "site/pkga", "site/pkgb"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    libs = world["libs"]
    built = {}

    def flags_for(lib):
        out = []
        if lib["path_kind"] != "none" and lib["path"]:
            elems = [e.replace("@ROOT@", root) for e in lib["path"]]
            out.append("-Wl,-rpath," + ":".join(elems))
            out.append("-Wl,--disable-new-dtags" if lib["path_kind"] == "rpath" else "-Wl,--enable-new-dtags")
        return out

    def compile_lib(lib, index, out_path, funcs, drop_v2=False, needs=()):
        src = os.path.join(root, "src", os.path.basename(out_path) + ".c")
        with open(src, "w") as f:
            f.write(c_source(lib, funcs, lib.get("hidden", []), lib.get("weak_defs", [])))
        cmd = ["gcc", "-shared", "-fPIC", "-o", out_path, src, "-Wl,-soname," + lib["name"]]
        if index is not None and lib.get("versions"):
            vs = os.path.join(root, "src", os.path.basename(out_path) + ".map")
            with open(vs, "w") as f:
                f.write(version_script(index, funcs, drop_v2))
            cmd.append("-Wl,--version-script=" + vs)
        cmd += flags_for(lib)
        cmd.append("-Wl,--no-as-needed")
        cmd += [built[j] for j in needs]
        r = run(cmd)
        if r.returncode != 0:
            raise RuntimeError(f"gcc failed for {out_path}: {r.stderr}")

    for i in reversed(range(len(libs))):
        lib = libs[i]
        d = os.path.join(root, lib["dir"])
        real = os.path.join(d, lib["name"] + (".0" if lib["symlink"] else ""))
        compile_lib(lib, i, real, lib["funcs"], needs=lib["needs"])
        if lib["symlink"]:
            os.symlink(os.path.basename(real), os.path.join(d, lib["name"]))
        built[i] = os.path.join(d, lib["name"])
        st = lib.get("stale")
        if st:
            keep = [f for f in lib["funcs"] if f not in st["drop"]] or [lib["funcs"][0]]
            compile_lib(lib, i, os.path.join(root, st["dir"], lib["name"]) + ".stale-tmp", keep,
                        drop_v2=st["drop_v2"], needs=lib["needs"])
    t = world["target"]
    tpath = os.path.join(root, t["dir"], t["name"])
    if world.get("python"):
        tpath, first = module_paths(world, root)
        t = dict(t, name="_exta.so")
        compile_lib(t, None, tpath, ["PyInit__exta"], needs=t["needs"])
        init = INIT.format(module="_exta")
        if first:
            # Its libraries' directories in its RUNPATH, so that the import done first mostly works.
            b = dict(world["python"]["first"], name="_extb.so", path_kind="runpath",
                     path=["@ROOT@/" + libs[j]["dir"] for j in world["python"]["first"]["needs"]])
            compile_lib(b, None, first, ["PyInit__extb"], needs=b["needs"])
            init = "import pkgb\n" + init
            with open(os.path.join(root, "site", "pkgb", "__init__.py"), "w") as f:
                f.write(INIT.format(module="_extb"))
        with open(os.path.join(root, "site", "pkga", "__init__.py"), "w") as f:
            f.write(init)
    else:
        compile_lib(t, None, tpath, [], needs=t["needs"])
    # Stale copies and missing files only after everything linked against the right ones.
    for i, lib in enumerate(libs):
        st = lib.get("stale")
        if st:
            dst = os.path.join(root, st["dir"], lib["name"])
            if os.path.lexists(dst):
                os.remove(dst)
            os.rename(dst + ".stale-tmp", dst)
        if lib["missing"]:
            d = os.path.join(root, lib["dir"])
            for name in (lib["name"], lib["name"] + ".0"):
                if os.path.lexists(os.path.join(d, name)):
                    os.remove(os.path.join(d, name))
    return built, tpath


def llp_value(world, root):
    return ":".join("" if e == "" else os.path.join(root, e) for e in world["ld_library_path"])


# ---------------------------------------------------------------------------------------------------
# The two verdicts.

REAL = r"""
import ctypes, json, os, sys
preloads = json.loads(sys.argv[2])
out = {"stage": "target", "ok": True, "err": "", "maps": []}
try:
    for p, g in preloads:
        out["stage"] = "preload"
        ctypes.CDLL(p, os.RTLD_NOW | (os.RTLD_GLOBAL if g else os.RTLD_LOCAL))
    out["stage"] = "target"
    ctypes.CDLL(sys.argv[1], os.RTLD_NOW)
except OSError as e:
    out["ok"] = False
    out["err"] = str(e)
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split(None, 5)
        if len(parts) == 6:
            out["maps"].append(parts[5].strip())
print(json.dumps(out))
"""


IMPORT = r"""
import json, sys
import os
out = {"stage": "preload", "ok": True, "err": "", "maps": []}
try:
    if os.path.exists(os.path.join(sys.path[0] if sys.path[0] else ".", "pkgb")) or any(
            os.path.isdir(os.path.join(p, "pkgb")) for p in sys.path if p):
        import pkgb  # what the tool is told was loaded before (--with ...:local), on its own first
    out["stage"] = "target"
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


def real_verdict(world, root, built, tpath):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = llp_value(world, root)
    if world.get("python"):
        env["PYTHONPATH"] = os.path.join(root, "site")
        r = run([PYTHON, "-c", IMPORT], cwd=os.path.join(root, world["cwd"]), env=env)
    else:
        pre = [[built[p["lib"]], p["global"]] for p in world["preloads"]]
        r = run([PYTHON, "-c", REAL, tpath, json.dumps(pre)], cwd=os.path.join(root, world["cwd"]), env=env)
    if r.returncode != 0:
        raise RuntimeError("the real-loader probe failed: " + r.stderr)
    v = json.loads(r.stdout)
    v["maps"] = sorted({os.path.realpath(m) for m in v["maps"] if m.startswith(root + "/")})
    return v


def tool_verdict(world, root, built, tpath, linkcheck, closure=False):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = llp_value(world, root)
    cmd = [linkcheck, "--format", "json", "--no-cache", "--cuda-home", ""]
    for p in world["preloads"]:
        cmd += ["--with", built[p["lib"]] + ("" if p["global"] else ":local")]
    if world.get("python"):
        env["PYTHONPATH"] = os.path.join(root, "site")
        cmd.append("--python=" + PYTHON)
        first = module_paths(world, root)[1]
        if first:
            cmd += ["--with", first + ":local"]
    if closure:
        cmd.append("--closure")
    cmd.append(tpath)
    r = run(cmd, cwd=os.path.join(root, world["cwd"]), env=env)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = None
    return r.returncode, doc, r.stderr


def compare(world, root, linkcheck):
    """None when the tool agrees with the loader, else (class, detail)."""
    built, tpath = build_world(world, root)
    real = real_verdict(world, root, built, tpath)
    if real["stage"] == "preload" and not real["ok"]:
        return "invalid", "a preload fails by itself"
    status, doc, err = tool_verdict(world, root, built, tpath, linkcheck)
    if status not in (0, 1) or doc is None:
        return "tool-error", f"exit {status}: {err.strip()[:300]}"
    if real["ok"] != (status == 0):
        return ("false-green" if status == 0 else "false-red"), f"loader: {real['err'] or 'loads'}; tool exit {status}"
    if not real["ok"]:
        e = real["err"]
        undefined = {u["symbol"] for lib in doc["libraries"] for u in lib["unresolved"]}
        missing = {n["name"] for lib in doc["libraries"] for n in lib["needed"] if n["path"] is None}
        versions = {v["version"] for lib in doc["libraries"] for v in lib["missing_versions"]}
        if "undefined symbol: " in e:
            name = e.split("undefined symbol: ", 1)[1].split(",")[0].split()[0]
            if name.split("@")[0] not in undefined:
                return "wrong-symbol", f"loader: {e}; tool: {sorted(undefined)}"
        elif "cannot open shared object file" in e:
            name = e.split(":")[0].strip()
            if os.path.basename(name) not in missing:
                return "wrong-library", f"loader: {e}; tool: {sorted(missing)}"
        elif "version `" in e:
            name = e.split("version `", 1)[1].split("'")[0]
            if name not in versions:
                return "wrong-version", f"loader: {e}; tool: {sorted(versions)}"
        return None
    # It loads: the copies mapped are the copies the tool picked.
    status, doc, err = tool_verdict(world, root, built, tpath, linkcheck, closure=True)
    if doc is None:
        return "tool-error", f"--closure exit {status}: {err.strip()[:300]}"
    picked = set()
    for lib in doc["libraries"]:
        picked.add(os.path.realpath(lib["path"]))
        for n in lib["needed"]:
            if n["path"]:
                picked.add(os.path.realpath(n["path"] if n["path"].startswith("/")
                                            else os.path.join(root, world["cwd"], n["path"])))
    picked = sorted(p for p in picked if p.startswith(root + "/"))
    if picked != real["maps"]:
        return "wrong-copy", f"loader mapped {real['maps']}; tool picked {picked}"
    return None


# ---------------------------------------------------------------------------------------------------
# Shrinking: drop one part at a time while the disagreement stays of the same class.


def candidates(world):
    w = world
    for k in range(len(w["preloads"])):
        c = copy.deepcopy(w); del c["preloads"][k]; yield c
    for k in range(len(w["ld_library_path"])):
        c = copy.deepcopy(w); del c["ld_library_path"][k]; yield c
    for key in ("weak_calls", "extra_calls", "calls", "path"):
        for k in range(len(w["target"][key])):
            c = copy.deepcopy(w); del c["target"][key][k]; yield c
    if w.get("python") and w["python"]["first"]:
        c = copy.deepcopy(w); c["python"]["first"] = None; yield c
        for k in range(len(w["python"]["first"]["calls"])):
            c = copy.deepcopy(w); del c["python"]["first"]["calls"][k]; yield c
    if w.get("python"):
        c = copy.deepcopy(w); del c["python"]; yield c
    if w["target"]["path_kind"] != "none":
        c = copy.deepcopy(w); c["target"]["path_kind"] = "none"; yield c
    for i, lib in enumerate(w["libs"]):
        for key in ("calls", "path", "hidden", "weak_defs"):
            for k in range(len(lib[key])):
                c = copy.deepcopy(w); del c["libs"][i][key][k]; yield c
        for flag in ("symlink", "missing", "versions"):
            if lib[flag]:
                c = copy.deepcopy(w); c["libs"][i][flag] = False; yield c
        if lib["stale"]:
            c = copy.deepcopy(w); c["libs"][i]["stale"] = None; yield c
        if lib["path_kind"] != "none":
            c = copy.deepcopy(w); c["libs"][i]["path_kind"] = "none"; yield c
        for k in range(len(lib["needs"])):
            c = copy.deepcopy(w)
            j = c["libs"][i]["needs"].pop(k)
            c["libs"][i]["calls"] = [f for f in c["libs"][i]["calls"] if f not in w["libs"][j]["funcs"]]
            yield c
    if w["cwd"] != "cwd":
        c = copy.deepcopy(w); c["cwd"] = "cwd"; yield c


def shrink(world, klass, root, linkcheck):
    current = world
    progress = True
    while progress:
        progress = False
        for c in candidates(current):
            try:
                got = compare(c, root, linkcheck)
            except Exception:  # a candidate that does not build is not a smaller case
                continue
            if got and got[0] == klass:
                current = c
                progress = True
                break
    return current


# ---------------------------------------------------------------------------------------------------


def check_one(args, label, world):
    root = os.path.join(args.work, label)
    try:
        got = compare(world, root, args.linkcheck)
        if got and got[0] not in ("invalid",):
            small = shrink(world, got[0], root, args.linkcheck) if args.shrink else world
            detail = compare(small, root, args.linkcheck)
            return label, got[0], detail[1] if detail else got[1], small
        return label, got[0] if got else None, None, None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--linkcheck", required=True)
    ap.add_argument("--work", required=True, help="a scratch directory (removed at the end)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--replay", help="a directory of saved worlds (*.json), checked before the generated ones")
    ap.add_argument("--save", help="where to save each disagreement, shrunk")
    ap.add_argument("--no-shrink", dest="shrink", action="store_false")
    args = ap.parse_args()
    args.linkcheck = os.path.abspath(args.linkcheck)
    args.work = os.path.abspath(args.work)
    if not os.access(args.linkcheck, os.X_OK):
        print(f"difftest: {args.linkcheck}: not an executable", file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)
    jobs = []
    if args.replay:
        for name in sorted(os.listdir(args.replay)):
            if name.endswith(".json"):
                with open(os.path.join(args.replay, name)) as f:
                    jobs.append((f"replay-{name[:-5]}", json.load(f)))
    for k in range(args.count):
        jobs.append((f"s{args.seed}-w{k}", generate(random.Random(f"{args.seed}:{k}"))))
    counts = {}
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for label, klass, detail, small in pool.map(lambda j: check_one(args, *j), jobs):
            counts[klass or "agree"] = counts.get(klass or "agree", 0) + 1
            if klass and klass != "invalid":
                failed.append(label)
                print(f"DISAGREE {label}: {klass}: {detail}")
                if args.save and small is not None:
                    os.makedirs(args.save, exist_ok=True)
                    with open(os.path.join(args.save, f"{label}-{klass}.json"), "w") as f:
                        json.dump(small, f, indent=1, sort_keys=True)
                        f.write("\n")
    shutil.rmtree(args.work, ignore_errors=True)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"difftest: {len(jobs)} worlds (seed {args.seed}): {summary}")
    print(f"{len(jobs) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
