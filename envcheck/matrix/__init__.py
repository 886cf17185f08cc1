"""compat_matrix.yaml: loading, validation and queries."""
