"""scikit-learn style estimators built on the problems."""
