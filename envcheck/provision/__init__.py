"""`envcheck provision`: playbooks (data) and running their steps on every host."""
