"""The real run's Table 2 regenerated with this round's statistics beside the one the README showed before (issue
43: "Tables 2-6 of the real run are regenerated with the new statistics, differences from the previous numbers
listed").

The previous table is the README's at a given commit (typed from an earlier run, never kept); the new one is the
kept run's ``tables/table2.md``. Per cell: the mean, the interval and the marks (bold, †, ‡) of each, and what
changed.

    python benchmarks/real_table2_differences.py --before 8806bca --kept runs/real/tables/table2.md \
        --out benchmarks/real_table2_differences.md
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

CELL = re.compile(
    r"^(?P<bold>\*\*)?(?P<mean>-?\d+\.\d+)(?:\*\*)?(?P<marks>[†‡*]*)\s*(?:\[(?P<low>[^,]+), (?P<high>[^\]]+)\])?"
)


def table_rows(markdown: str) -> dict[str, list[str]]:
    """``{model: cells}`` of the first markdown table whose header starts with ``| Model |``."""
    rows, inside = {}, False
    for line in markdown.splitlines():
        if line.startswith("| Model |"):
            inside, header = True, [c.strip() for c in line.strip("|").split("|")]
            continue
        if inside and line.startswith("|---"):
            continue
        if inside and line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
        elif inside:
            break
    rows["__header__"] = header[1:]
    return rows


def parsed(cell: str) -> dict:
    m = CELL.match(cell)
    if not m:
        return {"mean": None}
    return {"mean": m["mean"], "marks": ("bold " if m["bold"] else "") + m["marks"], "ci": (m["low"], m["high"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit whose README held the previous table")
    parser.add_argument("--kept", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    readme = subprocess.run(["git", "show", f"{args.before}:README.md"], capture_output=True, text=True, check=True)
    before, after = table_rows(readme.stdout), table_rows(Path(args.kept).read_text())
    old_header, new_header = before.pop("__header__"), after.pop("__header__")
    lines = [
        "# The real run's Table 2: before and after this round's statistics",
        "",
        f"Written by `benchmarks/real_table2_differences.py`: the README's Table 2 at commit `{args.before}` (from an "
        f"earlier run, typed, never kept) beside `{args.kept}` (regenerated, kept). Marks: bold the column's best, "
        "† not significantly worse than it, ‡ not above the chance range. The earlier marks came from a rank test; "
        "the new ones from the mean test that agrees with its interval, with splits of one pool treated as "
        "overlapping (docs/statistics.md).",
        "",
        "| model | column | before | after | what changed |",
        "|---|---|---|---|---|",
    ]
    for model, cells in after.items():
        old_cells = before.get(model)
        for column, new in zip(new_header, cells):
            old = old_cells[old_header.index(column)] if old_cells and column in old_header else ""
            a, b = parsed(old) if old else {"mean": None}, parsed(new)
            changed = []
            if a["mean"] is None:
                changed.append("new row" if not old_cells else "new cell")
            else:
                if a["mean"] != b["mean"]:
                    changed.append(f"mean {a['mean']} -> {b['mean']}")
                if a.get("ci") != b.get("ci"):
                    changed.append("interval")
                if a.get("marks") != b.get("marks"):
                    changed.append(f"marks '{a.get('marks')}' -> '{b.get('marks')}'")
            lines.append(f"| {model} | {column} | {old} | {new} | {'; '.join(changed) or 'same'} |")
    gone = sorted(set(before) - set(after))
    if gone:
        lines += ["", "Rows only before: " + ", ".join(gone) + "."]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(Path(args.out).read_text())


if __name__ == "__main__":
    main()
