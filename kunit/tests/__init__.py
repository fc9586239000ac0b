"""The tests of kunit/ (host tests)."""
