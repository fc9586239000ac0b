"""The tests of tools/bench (host tests; the C++ ones, *_test.cpp, run under ctest)."""
