"""The facts document (the probe's output): its schema and accessors (schema.py), the one way in,
validated and with its derived facts (load.py), the typed views commands read (views.py: GPU count,
node, privilege, login, toolkit at a path, what is at a path, a start-up file, the cuDNN manifest
and package owner of a toolkit), facts from `check` flags or saved files (from_flags.py), the
facts as a fix would leave them, made on a copy (edit.py); fixtures, raw collector input beside
the expected section: tests/facts/."""
