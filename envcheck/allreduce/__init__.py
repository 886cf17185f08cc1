"""`envcheck nccl-test`: preflight, the all-reduce run across nodes, nccl-tests' arithmetic, the rendering."""
