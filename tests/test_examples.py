"""Every example runs from an empty directory and writes only there (or to its --out folder).

Each script in ``examples/`` is run in a fresh subprocess whose working directory is
an empty temporary folder, with this checkout first on ``PYTHONPATH``; it must exit
0, leave ``git status --porcelain`` of the repository unchanged, and put its files in
the working directory.  Examples taking more than 20 s are marked slow (none today:
each takes 3–7 s on the 2-core development machine).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*.py"))
SLOW = set()  # names of examples taking > 20 s

pytest.importorskip("matplotlib")


def _git_status():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout


def _run(script, cwd, *args):
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


#: Arguments per example (default: none, so it writes to the working directory);
#: one writes into an --out folder instead.
ARGS = {"svr_tube": ("--out", "pictures")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run the examples that are not slow, two at a time (the machine has two cores).

    Returns a dict: name -> (CompletedProcess, its working directory, git status
    before, git status after all runs).
    """
    from concurrent.futures import ThreadPoolExecutor

    before = _git_status()
    fast = [p for p in EXAMPLES if p.stem not in SLOW]
    dirs = {p.stem: tmp_path_factory.mktemp(p.stem) for p in fast}
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = dict(zip([p.stem for p in fast],
                         pool.map(lambda p: _run(p, dirs[p.stem], *ARGS.get(p.stem, ())), fast),
                         strict=True))
    after = _git_status()
    return {name: (procs[name], dirs[name], before, after) for name in procs}


def _check(proc, cwd, before, after, args):
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert after == before, "an example changed the repository"
    for name in _files(cwd):  # whatever it wrote is a plot it announced
        assert name.endswith(".png") and f"wrote {name}" in proc.stdout, name
    if "--out" in args:
        assert _files(cwd) and all(name.startswith("pictures/") for name in _files(cwd))


@pytest.mark.parametrize("script", [
    pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else [])
    for p in EXAMPLES])
def test_example_runs_in_an_empty_directory(script, request, tmp_path):
    args = ARGS.get(script.stem, ())
    if script.stem in SLOW:
        before = _git_status()
        proc = _run(script, tmp_path, *args)
        _check(proc, tmp_path, before, _git_status(), args)
    else:
        _check(*request.getfixturevalue("runs")[script.stem], args)


def test_every_example_takes_out():
    assert EXAMPLES
    for script in EXAMPLES:
        assert '"--out"' in script.read_text(), f"{script.name} has no --out DIR option"
