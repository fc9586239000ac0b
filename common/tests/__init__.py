"""The tests of common/ (host tests)."""
