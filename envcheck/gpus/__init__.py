"""GPU identification beyond the driver: NVIDIA devices on the PCI bus (what a node has before
any driver is installed) mapped to a board name and a compute capability."""
