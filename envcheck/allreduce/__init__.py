"""`envcheck nccl-test`, one workload on the rank harness (envcheck/ranks/): the backend and ranks
per host (preflight.py), the run (run.py), why a failed run failed (cause.py), nccl-tests'
arithmetic (bandwidth.py), the verdict doctor and provision share (verdict.py), the pair rounds
that name a slow node or link against the median (pairs.py; pure) and what a link allows (linkrate.py:
sysfs speed, InfiniBand rate; inside a node nvlink.py: NVLinks up per GPU model, their rates with
NVIDIA's sources in nvlink.yaml), the rendering."""
