"""The README's shell blocks, for the README checks (tests/unit/test_readme_commands.py and
tests/integration/test_readme.py): every ```bash block, and which ones are marked to be run
(``<!-- readme: run -->`` on the line before the fence)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
RUN_MARK = "<!-- readme: run -->"
_FENCE = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Block:
    text: str
    run: bool

    def commands(self) -> list[list[str]]:
        """Each command line as argv (comments dropped, ``\\`` continuations joined)."""
        joined = self.text.replace("\\\n", " ")
        return [argv for line in joined.splitlines() if (argv := shlex.split(line, comments=True))]


def blocks(text: str | None = None) -> list[Block]:
    text = README.read_text(encoding="utf-8") if text is None else text
    out = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        out.append(Block(match.group(1), bool(before) and before[-1].strip() == RUN_MARK))
    return out
