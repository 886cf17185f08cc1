"""Which GPU a host holds, for commands that start from a machine instead of a --gpu flag
(host.py). The identification itself (PCI device id -> board, chip -> compute capability) is
core data beside the matrix: envcheck/matrix/pci.py."""
