"""`envcheck audit`: the probe on every host, the rules, the fleet comparison, and its rendering."""
