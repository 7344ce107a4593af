"""Progress bars appear on a terminal and nowhere else."""

import io
import sys

import pytest
from sklearn.datasets import make_classification
from tqdm import tqdm

from margin_opt import AdaBoost
from margin_opt.progress import progress


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal and keeps what is written to it."""

    def isatty(self):
        return True


def fake_terminal(monkeypatch):
    """Replace sys.stderr (inside the test: pytest resets it between setup and call)."""
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", term)
    return term


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=120, n_features=5, flip_y=0.2, random_state=0)


def test_plain_iterable_when_not_a_terminal(monkeypatch):
    stream = io.StringIO()  # isatty() is False, as in a pipe or a log file
    monkeypatch.setattr(sys, "stderr", stream)
    items = range(5)
    assert progress(items, desc="x") is items
    assert list(progress(items)) == [0, 1, 2, 3, 4]
    assert stream.getvalue() == ""


def test_tqdm_on_a_terminal(monkeypatch):
    terminal = fake_terminal(monkeypatch)
    bar = progress(range(5), desc="rounds")
    assert isinstance(bar, tqdm)
    assert list(bar) == [0, 1, 2, 3, 4]
    assert "rounds" in terminal.getvalue()


def test_enabled_overrides(monkeypatch):
    terminal = fake_terminal(monkeypatch)
    items = [1, 2]
    assert progress(items, enabled=False) is items
    assert terminal.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert isinstance(progress(items, enabled=True), tqdm)


def test_adaboost_silent_without_terminal(data, capfd):
    model = AdaBoost(n_estimators=200).fit(*data)
    assert model.n_iter_ > 50
    assert capfd.readouterr().err == ""


def test_adaboost_bar_only_for_long_runs(data, monkeypatch):
    terminal = fake_terminal(monkeypatch)
    AdaBoost(n_estimators=50).fit(*data)
    assert terminal.getvalue() == ""
    model = AdaBoost(n_estimators=200).fit(*data)
    assert "AdaBoost rounds" in terminal.getvalue()
    assert model.n_iter_ > 50


class _KernelShell:
    """What IPython's get_ipython() returns inside a Jupyter kernel (its config)."""
    config = {"IPKernelApp": {"connection_file": "kernel.json"}}


class _TerminalShell:
    config = {"TerminalInteractiveShell": {}}


def _fake_ipython(monkeypatch, shell):
    import types

    module = types.ModuleType("IPython")
    module.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", module)


def test_bar_in_a_notebook_without_a_terminal(monkeypatch):
    from margin_opt.progress import in_notebook

    stream = io.StringIO()  # a kernel's stderr is no terminal
    monkeypatch.setattr(sys, "stderr", stream)
    _fake_ipython(monkeypatch, _TerminalShell())
    assert not in_notebook()
    assert progress(range(3)) == range(3)
    _fake_ipython(monkeypatch, _KernelShell())
    assert in_notebook()
    bar = progress(range(3), desc="in a notebook")
    assert isinstance(bar, tqdm) and list(bar) == [0, 1, 2]


def test_no_ipython_is_no_notebook(monkeypatch):
    from margin_opt.progress import in_notebook

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not in_notebook()
