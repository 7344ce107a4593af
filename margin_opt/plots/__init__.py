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
