"""The facts document: its schema and accessors, and facts built from `check` flags or saved files."""
