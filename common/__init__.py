"""What the ci, kunit and tools packages share: the modules below them all."""
