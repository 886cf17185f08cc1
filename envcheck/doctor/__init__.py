"""`envcheck doctor`: audit -> connectivity -> short all-reduce -> rounds of node pairs -> one verdict
per node: the flow (run.py), SSH and srun and what doctor's flags mean for the all-reduce
(backend.py), checks.py, the verdicts (health.py), the pair rounds' checks (pairs.py), bisection
when no pair was measured (isolate.py), srun.py, the table, JUnit and Prometheus (render.py)."""
