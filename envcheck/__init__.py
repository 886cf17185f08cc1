"""envcheck: get a GPU cluster ready for distributed PyTorch training, and prove that it is."""

__version__ = "0.1.0"
