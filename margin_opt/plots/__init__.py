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
