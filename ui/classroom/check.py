"""Check lesson files before a class (issue 49):

    python -m ui.classroom.check FILE [FILE …]

prints ``FILE:LINE: what is wrong`` for each problem (exit status 1), or ``FILE: ok (N steps, M
that take answers)``. The same check runs when a teacher loads a lesson in the sidebar."""
from __future__ import annotations

import sys
from pathlib import Path

from ui.tour import parse, problems


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    bad = False
    for name in argv:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print(f"{name}: cannot be read: {e}")
            bad = True
            continue
        found = problems(text)
        for line, problem in found:
            print(f"{name}:{line}: {problem}")
        if not found:
            lesson = parse(text, path.stem)
            print(f"{name}: ok ({len(lesson.steps)} steps, {sum(s.ask is not None for s in lesson.steps)} "
                  "that take answers)")
        bad |= bool(found)
    return int(bad)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
