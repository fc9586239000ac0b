"""The project's checkout: ROOT, computed here and imported everywhere else
(ci/tests/test_paths.py keeps it so)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
