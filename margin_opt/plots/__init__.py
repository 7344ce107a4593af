"""Plots (matplotlib, the optional ``plot`` extra): one module per topic."""


def require_matplotlib():
    """Import matplotlib with the Agg backend, or raise a clear ImportError."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plots need matplotlib: python -m pip install 'margin_opt[plot]'") \
            from None
    return plt


def axes_for(ax, figsize):
    """``ax``, or the Axes of a new figure of ``figsize`` (inches, width and height)."""
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def class_label(value) -> str:
    """A class label for a legend: ``0``, ``1.5``, ``"yes"`` (numpy scalars as Python's)."""
    value = getattr(value, "item", lambda: value)()
    return f"{value:g}" if isinstance(value, float) else str(value)


def figure_paths(file, parts) -> dict:
    """Where the figures of one command go: ``file`` itself for a single figure, else
    ``STEM-part.png`` beside it for each part (``out/run.png`` → ``out/run-errors.png``).

    Parameters
    ----------
    file : str or path
    parts : sequence of str

    Returns
    -------
    paths : dict of str to str
    """
    from pathlib import Path

    parts = list(parts)
    if len(parts) == 1:
        return {parts[0]: str(file)}
    path = Path(file)
    suffix = path.suffix or ".png"
    return {part: str(path.with_name(f"{path.stem}-{part}{suffix}")) for part in parts}
