#!/usr/bin/env bash
# tools/dev.sh's deb-src check (the real-code panel skips without one): apt's sources as written by
# people, each with the answer apt itself gives. A commented "# deb-src" line is not an entry.
# Usage: dev_sh_test.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir/parts"
trap 'rm -rf "$dir"' EXIT
# shellcheck source=../tools/dev.sh
source "$src/tools/dev.sh"
set +e
failures=0
check() {  # check WANT DESCRIPTION: the sources written into $dir just before
  local got=no
  has_active_deb_src -o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=$dir/parts" && got=yes
  if [ "$got" != "$1" ]; then
    echo "FAIL: $2: has_active_deb_src says $got, want $1"
    failures=$((failures + 1))
  else
    echo "ok: $2 -> $got"
  fi
  rm -f "$dir/sources.list" "$dir"/parts/*
}
printf 'deb http://deb.debian.org/debian bookworm main\n# deb-src http://deb.debian.org/debian bookworm main\n' >"$dir/sources.list"
check no "one-line format, deb-src commented out"
printf 'deb http://deb.debian.org/debian bookworm main\ndeb-src http://deb.debian.org/debian bookworm main\n' >"$dir/sources.list"
check yes "one-line format, active deb-src"
: >"$dir/sources.list"
printf 'Types: deb\n# Types: deb deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' >"$dir/parts/debian.sources"
check no "deb822, deb-src only in a comment"
: >"$dir/sources.list"
printf 'Types: deb deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' >"$dir/parts/debian.sources"
check yes "deb822, Types: deb deb-src"
: >"$dir/sources.list"
printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n' >"$dir/parts/debian.sources"
check no "deb822, deb-src disabled (Enabled: no)"
exit $((failures > 0))
