"""The real run's Table 6 regenerated with this round's statistics beside the one the README showed before (issue
43: "Tables 2-6 of the real run are regenerated with the new statistics, differences from the previous numbers
listed").

The previous table is the README's at a given commit (all-MiniLM-L6-v2 trained by every method on the real Blurbs
S2S, typed from an earlier run, never kept); the new one is the kept run's ``adapt/table6.md``. Per method: the
adapted score, Δ with its interval, and p (Holm) of each, and what changed.

    python benchmarks/real_table6_differences.py --before 7c7ad79 --kept runs/real/adapt/table6.md \
        --out benchmarks/real_table6_differences.md
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pandas as pd

#: the previous table's method labels -> (method, protocol) of the regenerated table's rows
PREVIOUS_ROWS = {
    "SimCSE (own titles)": ("SimCSE", None),
    "ClusterNS (own titles)": ("ClusterNS", None),
    "COB (lodo: 10kGNAD)": ("COB", "lodo"),
    "Triplet (lodo: 10kGNAD)": ("Triplet", "lodo"),
    "argue, similarity": ("argue", "similarity"),
    "argue, order": ("argue", "order"),
}


def previous_table(readme: str) -> dict[str, dict]:
    """``{label: {adapted, delta, p}}`` of the README's Table 6 (the table whose header starts ``| method``)."""
    rows, inside = {}, False
    for line in readme.splitlines():
        if line.startswith("| method (protocol) |"):
            inside = True
            continue
        if inside and line.startswith("|---"):
            continue
        if inside and line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0] in PREVIOUS_ROWS:
                rows[cells[0]] = {"adapted": cells[1], "delta": cells[2], "p": cells[3]}
        elif inside:
            break
    return rows


def markdown_table(markdown: str) -> pd.DataFrame:
    """The first markdown table of ``markdown`` as strings, indexed by its first column."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    header, rows = lines[0], [line for line in lines[2:]]
    columns = [c.strip() for c in header.strip("|").split("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in rows]
    return pd.DataFrame(cells, columns=columns).set_index(columns[0])


def new_row(table: pd.DataFrame, method: str, protocol: str | None) -> pd.Series | None:
    """The regenerated table's row of ``method`` (and ``protocol``, when given)."""
    for label, row in table.iterrows():
        parts = [p.strip() for p in str(label).split("·")]
        if len(parts) >= 3 and parts[1] == method and (protocol is None or parts[2] == protocol):
            return row
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit whose README held the previous table")
    parser.add_argument("--kept", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    readme = subprocess.run(["git", "show", f"{args.before}:README.md"], capture_output=True, text=True, check=True)
    before = previous_table(readme.stdout)
    after = markdown_table(Path(args.kept).read_text(encoding="utf-8"))
    lines = [
        "# The real run's Table 6: before and after this round's statistics",
        "",
        f"Written by `benchmarks/real_table6_differences.py`: the README's Table 6 at commit `{args.before}` (from an "
        f"earlier run, typed, never kept) beside `{args.kept}` (regenerated, kept). Before: Δ's interval over seeds "
        "and splits with splits taken as independent, p a rank test after Holm. After: the interval widened for "
        "splits subsampled from one pool, p the mean test that agrees with it, after Holm (docs/statistics.md); "
        "the training jobs ran again, so the adapted scores may differ too.",
        "",
        "| method | adapted before | adapted after | Δ before | Δ after | p before | p after |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, (method, protocol) in PREVIOUS_ROWS.items():
        old, new = before.get(label, {}), new_row(after, method, protocol)
        cells = ("", "", "") if new is None else (new.get("adapted", ""), new.get("Δ", ""), new.get("p", ""))
        lines.append(
            f"| {label} | {old.get('adapted', '')} | {cells[0]} | {old.get('delta', '')} | {cells[1]} "
            f"| {old.get('p', '')} | {cells[2]} |"
        )
    added = [
        str(label)
        for label in after.index
        if not any(new_row(after.loc[[label]], m, p) is not None for m, p in PREVIOUS_ROWS.values())
    ]
    if added:
        lines += ["", "Rows the previous table did not have: " + "; ".join(added) + "."]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.out)


if __name__ == "__main__":
    main()
