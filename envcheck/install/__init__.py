"""Provisioning operations: install-cuda (cuda.py), install-cudnn (cudnn.py), env (envblock.py).

Each follows the same shape: one fact command per node, a pure plan (facts + args -> steps, or
"nothing to do" with the reason), then execution of that plan. --dry-run prints the plan.
"""
