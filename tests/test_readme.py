"""Every ```python block of README.md and of the documentation's Markdown pages
(docs/*.md) runs as pasted, alone, in an empty directory.

Each block is run in a fresh interpreter (a subprocess with this checkout first on
``PYTHONPATH``) whose working directory is an empty temporary folder, so a block may
use nothing that an earlier block defined and no file of the repository.  A block
is skipped only when the line right before its opening fence is an HTML comment
``<!-- skip-test: reason -->`` (the reason is shown in the test report).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_SKIP = re.compile(r"<!--\s*skip-test:\s*(.*?)\s*-->\s*\Z", re.S)


def python_blocks(text):
    """``(line number, code, skip reason or None)`` for every ```python block of ``text``."""
    blocks = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        blocks.append((line, match.group(1), skip.group(1) if skip else None))
    return blocks


PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
README_BLOCKS = python_blocks(README.read_text(encoding="utf-8"))
#: (file, line, code, skip reason) of every block of every page
BLOCKS = [(path.name, *block) for path in PAGES
          for block in python_blocks(path.read_text(encoding="utf-8"))]


def test_blocks_found():
    assert len(README_BLOCKS) >= 3 and len(BLOCKS) > len(README_BLOCKS)
    skipped = [b for b in BLOCKS if b[3]]
    assert len(skipped) < len(BLOCKS) // 2, "most documented blocks must run as pasted"


def test_extraction():
    text = ("intro\n```python\nx = 1\n```\n<!-- skip-test: needs a GPU -->\n"
            "```python\nraise SystemExit(1)\n```\n```bash\nls\n```\n")
    assert python_blocks(text) == [(2, "x = 1\n", None), (6, "raise SystemExit(1)\n",
                                                         "needs a GPU")]


def _run(code, cwd):
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every block not skipped, each in its own empty folder, two at a time (the machine
    has two cores; a block's interpreter mostly imports, on one core): line -> (the
    CompletedProcess, its folder)."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [((name, line), code) for name, line, code, skip in BLOCKS if not skip]
    dirs = {key: tmp_path_factory.mktemp(f"{key[0]}-line{key[1]}") for key, _ in todo}
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = pool.map(lambda block: _run(block[1], dirs[block[0]]), todo)
        return {key: (proc, dirs[key]) for (key, _), proc in zip(todo, procs, strict=True)}


@pytest.mark.parametrize("name, line, code, skip", BLOCKS,
                         ids=[f"{b[0]}-line{b[1]}" for b in BLOCKS])
def test_block_runs(name, line, code, skip, request):
    if skip:
        pytest.skip(f"{name} line {line}: {skip}")
    proc, cwd = request.getfixturevalue("runs")[(name, line)]
    assert proc.returncode == 0, (f"{name} block at line {line} failed:\n{code}\n"
                                  f"{proc.stderr[-3000:]}")
    assert not any(cwd.iterdir()), f"a {name} block left files behind"
