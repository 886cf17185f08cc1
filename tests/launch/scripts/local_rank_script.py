"""A script written for torch.distributed.launch, as in the origin notes: --local_rank parsed
from the command line (required), init_method='env://', one all-reduce of the ranks' numbers."""
import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, required=True)
parser.add_argument("--tag", default="")
args = parser.parse_args()


def main():
    dist.init_process_group("gloo", init_method="env://")
    t = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(t)
    print("local_rank=%d rank=%d sum=%g tag=%s" % (args.local_rank, dist.get_rank(), t.item(),
                                                    args.tag), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
