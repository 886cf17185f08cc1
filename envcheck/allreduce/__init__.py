"""`envcheck nccl-test`, one workload on the rank harness (envcheck/ranks/): the backend and ranks
per host (preflight.py), the run (run.py), why a failed run failed (cause.py), nccl-tests'
arithmetic (bandwidth.py), the verdict doctor and provision share (verdict.py), the rendering."""
