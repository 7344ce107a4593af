"""Linear solvers with w explicit (liblinear's family)."""
