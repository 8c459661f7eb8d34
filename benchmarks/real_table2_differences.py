"""The real run's Table 2 regenerated with this round's statistics beside the one the README showed before (issue
43: "Tables 2-6 of the real run are regenerated with the new statistics, differences from the previous numbers
listed").

The previous table is the README's at a given commit (typed from an earlier run, never kept); the new one is the
kept run's ``tables/table2.md``. Per cell: the mean, the interval and the marks (bold, †, ‡) of each, and what
changed.

    python benchmarks/real_table2_differences.py --before 8806bca --kept runs/real/tables/table2.md \
        --out benchmarks/real_table2_differences.md

With ``--before-path`` the previous table is that kept file at ``--before`` (a kept table rendered again, issue
53), and ``--statistics`` adds each comparison of ``tables/table2_statistics.csv`` before and after (its p values,
the new detectable difference):

    python benchmarks/real_table2_differences.py --before 91b9323 --before-path runs/real/tables/table2.md \
        --kept runs/real/tables/table2.md --statistics --out benchmarks/real_table2_rerender.md
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
    parser.add_argument("--before-path", default="README.md", help="the file at --before that holds the table")
    parser.add_argument("--statistics", action="store_true", help="add table2_statistics.csv before and after")
    parser.add_argument("--title", help="what differs between the two (default: the statistics)")
    args = parser.parse_args()
    previous = _show(args.before, args.before_path)
    before, after = table_rows(previous), table_rows(Path(args.kept).read_text())
    old_header, new_header = before.pop("__header__"), after.pop("__header__")
    if args.before_path == "README.md":
        title, intro = (
            "this round's statistics",
            (
                f"the README's Table 2 at commit `{args.before}` (from an earlier run, typed, never kept) beside "
                f"`{args.kept}` (regenerated, kept). Marks: bold the column's best, † not significantly worse than it, "
                "‡ not above the chance range. The earlier marks came from a rank test; the new ones from the mean test "
                "that agrees with its interval, with splits of one pool treated as overlapping (docs/statistics.md)."
            ),
        )
    else:
        title, intro = (
            "the statistics of issue 53",
            (
                f"`{args.before_path}` as kept at commit `{args.before}` beside `{args.kept}` as it is now. Marks: bold "
                "the column's best, † not significantly worse than it, ‡ not above the chance range."
            ),
        )
    title = args.title or title
    lines = [
        f"# The real run's Table 2: before and after {title}",
        "",
        f"Written by `benchmarks/real_table2_differences.py`: {intro}",
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
    if args.statistics:
        stats = "table2_statistics.csv"
        lines += statistics_lines(
            args.before, Path(args.before_path).with_name(stats), Path(args.kept).with_name(stats)
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(Path(args.out).read_text())


def _show(commit: str, path: str | Path) -> str:
    """``path`` (relative to the repository) as committed at ``commit``."""
    return subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout


def _points(value) -> str:
    """A difference x 100 at two decimals, empty where the file has none."""
    return "" if value is None or value != value else f"{100 * value:.2f}"


def statistics_lines(commit: str, previous: Path, kept: Path) -> list[str]:
    """A table of each non-best comparison of ``kept`` (a table2_statistics.csv) beside ``previous`` at ``commit``:
    p, Holm p (before), p, Hsu's MCB p and the detectable difference (after), whether it is marked not worse
    (†)."""
    import io

    import pandas as pd

    old = pd.read_csv(io.StringIO(_show(commit, previous))).set_index(["column", "model"])
    new = pd.read_csv(kept).set_index(["column", "model"])
    lines = [
        "",
        f"`{kept}` beside `{previous}` at `{commit}`, each model against its column's best (x 100 for the "
        "differences): before, the p, Holm p and detectable difference the file printed (against its own column's best); after, the t test's p, Hsu's MCB p (the † "
        "decision) and the smallest difference the test detects with 80 % power.",
        "",
        "| column | model | diff | p before | Holm p before | detectable before | † before | p after | MCB p after "
        "| detectable | † after |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for key, row in new[~new.best].iterrows():
        was = old.loc[key] if key in old.index else None
        before = (
            [f"{was.p_value:.3g}", f"{was.p_holm:.3g}", _points(was.get("detectable")), "†" if was.not_worse else ""]
            if was is not None
            else ["", "", "", ""]
        )
        after = [f"{row.p_value:.3g}", f"{row.p_mcb:.3g}", _points(row.detectable), "†" if row.not_worse else ""]
        lines.append("| " + " | ".join([*key, f"{100 * row['diff']:.2f}", *before, *after]) + " |")
    return lines


if __name__ == "__main__":
    main()
