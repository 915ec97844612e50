"""How a number is written everywhere text shows one (reports, console, gate reasons): a value
that rounds to zero has no sign."""

from __future__ import annotations

import re

# a formatted number whose digits are all zero: its sign (if any) is dropped
_ZERO = re.compile(r"(?P<pad>\s*)[+-](?P<zero>[0.,_]*0[0.,_]*(?:[eE][+-]?[0-9]+)?%?\s*)")


def formatted(value, spec: str = ".4f") -> str:
    """``format(value, spec)``, but a value that rounds to zero in ``spec`` is written without a
    sign ("0.0000", never "-0.0000" nor "+0.0000"), whatever the sign of the value, in the
    same width."""
    text = format(value, spec)
    zero = _ZERO.fullmatch(text)
    if not zero:
        return text
    if zero["pad"]:  # right-aligned in a width: a space takes the sign's place
        return zero["pad"] + " " + zero["zero"]
    return zero["zero"] + (" " if text.endswith(" ") else "")
