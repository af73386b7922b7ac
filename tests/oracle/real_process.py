"""What the real process says of one ELF file of a site-packages tree: the oracle that the venv benchmark
(tests/bench/venv_bench.py) and the site-packages agreement test (tests/difftest/site_agree.py) share.

A program (ET_EXEC, or DF_1_PIE: glibc refuses to dlopen a PIE) is asked of `ldd -r`. Any other file, of
a fresh interpreter: the innermost package holding it is imported (its __init__ runs, importing torch
where it does; a package failing in Python, not in the loader, is passed for its nearest importable
parent), an extension module is imported by its dotted name (it loads when that import works and opened
this very file: Python never opens a module of another Python's tag; an import failing in Python, not in
the loader, is noted as a package's is), then the file is loaded with ctypes.CDLL(path, RTLD_NOW).
"""
import os
import struct
import subprocess

PROBE = (
    "import ctypes, importlib, importlib.machinery, os, re, sys\n"
    "loader = re.compile(r'cannot open shared object|undefined symbol|version `|ELF|cannot (allocate|enable|map)|"
    "file too short|static TLS')\n"
    "def said(e):\n    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__\n"
    "path, pkg, module, note = sys.argv[1], sys.argv[2], sys.argv[3], ''\n"
    "while pkg:\n    try:\n        importlib.import_module(pkg)\n        break\n"
    "    except Exception as e:\n        if loader.search(said(e)):\n            print('fails', said(e))\n"
    "            sys.exit(0)\n        note = note or said(e)\n        pkg = pkg.rpartition('.')[0]\n"
    # An extension module is loaded by the import of its name: it loads when that import works and opened
    # this file (Python never opens a module of another Python's tag).
    # An import that fails in Python before or after the loader's part (a parent package that does not
    # import, an error the module's init raises, a circular import) says nothing of the load: noted, and
    # the file is loaded as below; unless this Python never opens a file so named (another Python's tag).
    "if module:\n    try:\n        m = importlib.import_module(module)\n"
    "        f = getattr(m, '__file__', None)\n"
    "        if not f or not os.path.exists(f) or not os.path.samefile(f, path):\n"
    "            print('fails', 'import ' + module + ' opens ' + str(f) + ', not this file')\n            sys.exit(0)\n"
    "    except Exception as e:\n"
    "        if loader.search(said(e)) or os.path.basename(path) not in [module.rpartition('.')[2] + s for s in importlib.machinery.EXTENSION_SUFFIXES]:\n"
    "            print('fails', said(e))\n            sys.exit(0)\n"
    "        note = note or said(e)\n"
    "try:\n    ctypes.CDLL(path, os.RTLD_NOW)\n"
    "    print('ok' + (' (its package fails in Python: ' + note + '; checked after ' + (pkg or 'no package') + ')'"
    " if note else ''))\n"
    "except Exception as e:\n    print('fails', said(e))\n")


def package_of(path, site):
    """The package holding the file, as the import names it : its directory below the site
    directory, dotted; "" outside it or where a part is no identifier."""
    rel = os.path.relpath(os.path.dirname(path), site)
    parts = [] if rel == "." else rel.split(os.sep)
    if rel.startswith("..") or not all(p.isidentifier() for p in parts):
        return ""
    return ".".join(parts)


def extension(path, env):
    try:
        syms = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, env=env).stdout
    except OSError:
        return False
    return " PyInit_" in syms


def program(path):
    """An executable (ET_EXEC, or DF_1_PIE): run, never dlopen'ed (glibc refuses a PIE)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
                return False
            e_type, = struct.unpack_from("<H", head, 16)
            if e_type == 2:
                return True
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
            for i in range(phnum):
                p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
                if p_type != 2:  # PT_DYNAMIC
                    continue
                f.seek(p_offset)
                dyn = f.read(p_filesz)
                for j in range(0, len(dyn) - 15, 16):
                    tag, val = struct.unpack_from("<qQ", dyn, j)
                    if tag == 0:
                        break
                    if tag == 0x6ffffffb and val & 0x08000000:  # DT_FLAGS_1 & DF_1_PIE
                        return True
        return False
    except (OSError, struct.error):
        return False


def elf_files(site):
    out = []
    for d, dirs, files in os.walk(site):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(d, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    out.append(path)
    return out


def dotted_module(path, site):
    """The dotted name Python's import gives an extension module at `path`: its package and the part of its
    file name before the first dot; "" where no import names it."""
    name = os.path.basename(path).split(".", 1)[0]
    if not name.isidentifier():
        return ""
    rel = os.path.relpath(os.path.dirname(path), site)
    if rel == ".":
        return name
    pkg = package_of(path, site)
    return f"{pkg}.{name}" if pkg else ""


def oracle(path, site, py, env):
    """(ok, what the real process says) for one file."""
    ext = extension(path, env)
    if program(path):
        r = subprocess.run(["ldd", "-r", path], capture_output=True, text=True, env=env, timeout=300)
        bad = [line.strip() for line in (r.stdout + r.stderr).splitlines()
               if "not found" in line or "undefined symbol" in line]
        return (False, "fails (program) " + bad[0][:200]) if bad else (True, "ok (program)")
    module = dotted_module(path, site) if ext else ""
    r = subprocess.run([py, "-c", PROBE, path, package_of(path, site), module], capture_output=True, text=True,
                       env=env, timeout=300, cwd="/")
    said = r.stdout.strip() or ("fails " + r.stderr.strip().splitlines()[-1][:200] if r.stderr.strip() else "fails")
    return said.startswith("ok"), said
