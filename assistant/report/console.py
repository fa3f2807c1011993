"""Rich renderables → a string, styled for the terminal stdout goes to (or plain when it is none)."""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.console import Console, RenderableType


def capture(renderables: Iterable[RenderableType], like: Console | None = None) -> str:
    """Render *renderables* with the colour and width of *like* (default: a Console on stdout,
    which honours NO_COLOR, TERM=dumb and COLUMNS) and return the text."""
    real = like or Console()
    buf = io.StringIO()
    c = Console(
        file=buf,
        force_terminal=real.is_terminal,
        color_system=real.color_system,  # type: ignore[arg-type]
        no_color=real.no_color,
        width=real.width,
        legacy_windows=False,
    )
    for r in renderables:
        c.print(r)
    return buf.getvalue()
