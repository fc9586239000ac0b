"""The tests of tools/series (host tests)."""
