"""`envcheck launch`: the user's own distributed training script on every node, after nccl-test's
preflight, with every rank's output streamed live, no hang and no stray process."""
