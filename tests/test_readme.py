"""README starts with the two commands; .ci/run runs the second one exactly."""

from tests.conftest import ROOT


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```bash\n")[1:3]]
    assert len(blocks) == 2 and "trl-help explain examples/" in blocks[0] and "pytest" in blocks[1]
    assert (ROOT / "examples").joinpath(blocks[0].rsplit(" ", 1)[-1].removeprefix("examples/")).is_file()
    ci_lines = [
        ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln and not ln.startswith(("#", "set ", "cd "))
    ]
    assert ci_lines == [blocks[1]]
