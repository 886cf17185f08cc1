"""envcheck inside Slurm: the node-local hook for HealthCheckProgram, Prolog and Epilog (hook.py),
the scontrol calls it makes and how it reads a node (nodes.py), which reasons are envcheck's and
what it may do (policy.py), the Epilog's leftover GPU processes (gpuprocs.py), and the wrapper
`--print-config` writes (config.py). docs/slurm.md says how a site sets it up."""
