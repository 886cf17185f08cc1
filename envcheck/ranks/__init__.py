"""The rank harness: what every command that starts torch.distributed ranks on the nodes shares.

nccl-test (envcheck/allreduce/) and launch (envcheck/launch/) are two workloads on it, as
nccl-tests keeps one harness (common.cu) and a small file per collective:
- plan.py: the pure plan of ranks (ranks per host, the interface, MASTER_ADDR/PORT) from the
  nodes' facts;
- preflight.py: the nodes' facts (the probe), the plan, and whether every node reaches the master;
- start.py: how a host's launcher is started and stopped (the seam where SSH is one way);
- records.py: every record the node side writes, parsed once into typed records;
- failure.py: the one failure record, its kinds, which of them blame the host they name, and
  the rule that names the rank that failed first;
- node side: envcheck/node/rank_preflight.py (torch, listen/connect), rank_supervisor.py and
  rank_protocol.py (the supervision and the records the two node launchers share).
"""
