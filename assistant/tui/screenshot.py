"""Save an SVG screenshot of the main screen with a real diagnosis (for the docs).

    python -m assistant.tui.screenshot LOGFILE [--out docs/tui-main.svg] [--size 100x32]

Runs the app headless with the real matcher, waits for the diagnosis, writes the SVG.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path


async def _shoot(file: Path, out: Path, size: tuple[int, int], select: int, theme: str | None) -> str:
    from assistant.tui.app import TrlHelpApp
    from assistant.tui.engine import load_engine

    app = TrlHelpApp(engine=load_engine(), initial_file=file)
    if theme:
        app.theme = theme
    async with app.run_test(size=size) as pilot:
        end = time.monotonic() + 120
        while app.main.diagnosis is None:
            if time.monotonic() > end:
                raise SystemExit("no diagnosis within 120 s")
            await pilot.pause(0.1)
        for _ in range(select):
            await pilot.press("down")
        await pilot.pause(1.0)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.5)
        d = app.main.diagnosis
        out.parent.mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=out.name, path=str(out.parent))
        return f"{d.verdict}: {d.matches[0].case_id if d.matches else '-'}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m assistant.tui.screenshot")
    p.add_argument("file", type=Path)
    p.add_argument("--out", type=Path, default=Path("docs/tui-main.svg"))
    p.add_argument("--size", default="100x32", help="COLSxROWS (default 100x32)")
    p.add_argument("--select", type=int, default=0, help="candidate to show (0 = top)")
    p.add_argument("--theme", help="Textual theme, e.g. textual-light")
    args = p.parse_args(argv)
    cols, rows = (int(x) for x in args.size.lower().split("x"))
    print(asyncio.run(_shoot(args.file, args.out, (cols, rows), args.select, args.theme)), "->", args.out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
