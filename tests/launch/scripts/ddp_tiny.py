"""A tiny DDP training for `envcheck launch`'s tests: gloo on CPU, a DistributedSampler, a linear
model, a few SGD steps; every rank prints its final parameters as `PARAMS [...]`.

  envcheck launch node01 node02 --nproc-per-node 2 -- ddp_tiny.py      (env://)
  python ddp_tiny.py --single --world 4      the same training in one process, for comparison

Fault switches for the tests: --raise-rank K (rank K raises at step 1), --hang-rank K (rank K
sleeps at step 1, before its backward; the others then wait for it inside DDP's all-reduce).
Written against torch APIs that exist since torch 1.1.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

BATCH = 4          # per rank
STEPS = 4


def dataset():
    g = torch.Generator()
    g.manual_seed(0)
    x = torch.randn(128, 4, generator=g)
    y = x.mm(torch.tensor([[1.0], [-2.0], [0.5], [3.0]])) + 0.1
    return TensorDataset(x, y)


def train(model, loader, rank, args):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(loader):
        if step == STEPS:
            break
        loss = torch.nn.functional.mse_loss(model(x), y)
        if step == 1 and rank == args.raise_rank:
            raise RuntimeError("boom from rank %d" % rank)
        if step == 1 and rank == args.hang_rank:
            time.sleep(3600)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("rank %d step %d loss %.6f" % (rank, step, loss.item()), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--single", action="store_true")
    ap.add_argument("--world", type=int, default=1)
    ap.add_argument("--raise-rank", type=int, default=-1)
    ap.add_argument("--hang-rank", type=int, default=-1)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    ds = dataset()
    if args.single:
        # one process, the union of every rank's batch at each step: what DDP averages over
        sampler = DistributedSampler(ds, num_replicas=1, rank=0)
        sampler.set_epoch(0)
        train(model, DataLoader(ds, batch_size=BATCH * args.world, sampler=sampler), 0, args)
        params = model
    else:
        dist.init_process_group("gloo", init_method="env://")
        rank = dist.get_rank()
        sampler = DistributedSampler(ds)
        sampler.set_epoch(0)
        params = torch.nn.parallel.DistributedDataParallel(model)
        train(params, DataLoader(ds, batch_size=BATCH, sampler=sampler), rank, args)
        params = params.module
        print("env MASTER_ADDR=%s LOCAL_RANK=%s LOCAL_WORLD_SIZE=%s WORLD_SIZE=%s" % (
            os.environ["MASTER_ADDR"], os.environ["LOCAL_RANK"], os.environ["LOCAL_WORLD_SIZE"],
            os.environ["WORLD_SIZE"]), flush=True)
    print("PARAMS " + json.dumps([p.detach().reshape(-1).tolist() for p in params.parameters()]),
          flush=True)
    if not args.single:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
