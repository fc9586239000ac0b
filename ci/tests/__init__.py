"""The pipeline's own tests (the host tests)."""
