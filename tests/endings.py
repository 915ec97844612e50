"""How a refusal ends, held alike by every test of one: one stderr line, no traceback."""


def one_line(stderr: str, output: str, *words: str) -> str:
    """The single non-blank line of ``stderr`` (``output``: all the command printed, for the
    traceback check), holding each of ``words``."""
    assert "Traceback" not in output, output
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]
