"""KUnit in UML through the kernel tree's kunit.py."""
