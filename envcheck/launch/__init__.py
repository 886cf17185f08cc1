"""`envcheck launch`: the user's own distributed training script on every node, after the rank
harness's preflight (the one nccl-test runs too), with every rank's output streamed live, no hang
and no stray process."""
