"""Problems: one module per model, each an explicit cvxpy primal and dual."""
