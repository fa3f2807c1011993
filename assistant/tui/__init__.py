"""tui stage: the Textual app behind `trl-help tui [FILE]`.

Layout: :mod:`assistant.tui.app` (the App), ``screens/`` (main, parsed view, probe dialog,
help, open file), ``widgets/`` (paste area, candidate list, case view, status line),
:mod:`assistant.tui.messages` (events between them), :mod:`assistant.tui.engine` (the small
interfaces the app depends on: a diagnosis engine and a probe runner) and
:mod:`assistant.tui.render` (pure Markdown / text builders, testable without a terminal).
"""
