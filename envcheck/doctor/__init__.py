"""`envcheck doctor`: audit -> connectivity -> short all-reduce -> one verdict per node; isolation, srun, rendering."""
