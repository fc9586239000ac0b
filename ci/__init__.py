"""The pipeline: its stages, the VM and selftest runs, the report."""
