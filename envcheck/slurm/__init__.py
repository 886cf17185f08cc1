"""envcheck inside Slurm: the node-local hook for HealthCheckProgram, Prolog and Epilog (hook.py),
the scontrol calls it makes and how it reads a node (nodes.py), which reasons are envcheck's and
what it may do (policy.py), the wrapper
`--print-config` writes (config.py), and srun as the transport to the nodes of an allocation
(srun.py) and the starter of ranks (srun_ranks.py). The leftover GPU processes an Epilog looks
for are the probe's gpu_processes section. docs/slurm.md says how a site sets it up."""
