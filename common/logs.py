"""Where the project's progress lines go.

Modules log through `logging.getLogger(__name__)`; the entry points that
reach them (ci/pipeline.py's main() and the main() of those modules) are
decorated with @printed: while one runs, every record of INFO and above is
printed as its bare message on stdout, as print() did. The handler looks
sys.stdout up at each record, so a caller that redirects stdout still sees
the lines, and they keep their order with what is print()ed (the pipeline's
own log() lines among them). Outside an entry point (a test calling a
function) nothing is printed: assertLogs() sees the records.
"""

import functools
import logging
import sys
from collections.abc import Callable
from typing import ParamSpec, TextIO, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class StdoutHandler(logging.StreamHandler[TextIO]):
    """A StreamHandler on whatever sys.stdout is when a record comes."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stdout

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def printed(main: Callable[P, R]) -> Callable[P, R]:
    """Run `main` with the records of INFO and above printed on stdout; an
    entry point called from another one prints through the caller's."""

    @functools.wraps(main)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        root = logging.getLogger()
        if any(isinstance(h, StdoutHandler) for h in root.handlers):
            return main(*args, **kwargs)
        handler, level = StdoutHandler(), root.level
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            return main(*args, **kwargs)
        finally:
            root.removeHandler(handler)
            root.setLevel(level)
    return run
