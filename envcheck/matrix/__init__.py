"""compat_matrix.yaml: loading, validation and queries; one entry resolved for `matrix show` (show.py)."""
