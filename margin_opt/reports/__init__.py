"""Reports behind ``margin-opt verify``: one module per model (faces layer)."""
