"""Provisioning operations: install-cuda (cuda.py), install-cudnn (cudnn.py), env (envblock.py).

Each follows the same shape: the probe's sections read the node (one command, install/common.py:
read_node; --show-probe prints it), a pure plan (facts + args -> steps, or "nothing to do" with
the reason), then execution of that plan. --dry-run prints the plan.
"""
