"""The benchmark's driver, statistics and report (the C++ sender beside it)."""
