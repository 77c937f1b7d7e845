#!/bin/sh
# usage: bench/install-commit.sh COMMIT DIR
#
# graphmem as it was at COMMIT, installed in DIR (a git worktree of this repository) with a
# virtual environment DIR/.venv whose dependencies are this checkout's .venv's (a .pth line:
# nothing is downloaded but pip's build backend). Prints the Python to give to
# `graphmem bench api --against`, which serves and loads that install in the same run as
# this one (issue 14's targets are ratios against the code of its day, measured in one run).
set -eu
if [ $# -ne 2 ]; then
    echo "usage: bench/install-commit.sh COMMIT DIR" >&2
    exit 2
fi
commit=$1
dir=$2
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
venv=$root/.venv
if [ ! -x "$venv/bin/python" ]; then
    echo "install-commit: $venv/bin/python is missing: run make install first" >&2
    exit 2
fi
if [ ! -e "$dir" ]; then
    git -C "$root" worktree add --detach "$dir" "$commit" >/dev/null 2>&1 || {
        echo "install-commit: no worktree of $commit at $dir" >&2
        exit 1
    }
fi
base=$("$venv/bin/python" -c 'import sys; print(sys._base_executable)')
deps=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$base" -m venv "$dir/.venv"
own=$("$dir/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# after the install's own packages: its graphmem, not this checkout's, is imported
echo "$deps" > "$own/zz-dependencies-of-$(basename "$root").pth"
"$dir/.venv/bin/python" -m pip install --quiet --no-deps "$dir" >&2
echo "$(cd "$dir" && pwd)/.venv/bin/python"
