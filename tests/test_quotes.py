"""Contrasts quoted in the README and docs are the generated ones (tecb.report.quotes, issue 43.2)."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import ROOT

from tecb.report.quotes import TAG, check_quotes, untagged_contrasts

REAL = ROOT / "runs" / "real"  # the real run's generated tables, kept in the repository
ROW = "clusterns − simcse · M · ClusterNS transductive · BlurbsClusteringS2S · all"


def _contrasts(tmp_path):
    table = pd.DataFrame(
        {
            "delta": [0.4049],
            "ci_low": [-0.3112],
            "ci_high": [1.37],
            "splits": [28],
            "p": ["0.006"],
            "p_holm": ["1.000"],
        },
        index=pd.Index([ROW], name="contrast · model · a · dataset · design"),
    )
    (tmp_path / "adapt").mkdir()
    table.to_csv(tmp_path / "adapt" / "contrasts.csv")


def test_a_tagged_line_must_quote_its_rows_numbers(tmp_path):
    _contrasts(tmp_path)
    tag = f"<!-- contrast: adapt/contrasts.csv {ROW} -->"
    good = f"ClusterNS − SimCSE on Blurbs S2S (28 splits): +0.40 [−0.31, +1.37], p 0.006, Holm 1.00 {tag}"
    assert check_quotes(good, tmp_path) == []
    wrong = f"ClusterNS − SimCSE: +0.40 [-0.19, +1.34] (p 0.006) {tag}"
    assert check_quotes(wrong, tmp_path) == [
        f"line 1: -0.19 is not in adapt/contrasts.csv row {ROW!r}",
        f"line 1: +1.34 is not in adapt/contrasts.csv row {ROW!r}",
    ]
    assert "has no row" in check_quotes("x 1.0 <!-- contrast: adapt/contrasts.csv nothing -->", tmp_path)[0]
    assert "does not exist" in check_quotes(f"<!-- contrast: adapt/none.csv {ROW} -->", tmp_path)[0]


def test_a_contrast_typed_by_hand_is_found():
    assert untagged_contrasts("- ClusterNS - SimCSE +0.40 [-0.31, +1.37] (p 0.006)") != []
    assert untagged_contrasts("argue's similarity objective is ahead of order: +0.47 [-0.04, +1.22].") != []
    assert untagged_contrasts("ClusterNS vs SimCSE: see adapt/contrasts.md") == []  # no number: fine
    assert untagged_contrasts("SimCSE +0.98 [-0.2, +2.1] over its base") == []  # a Table 6 row, not a contrast


def test_the_docs_quote_no_contrast_by_hand():
    problems = {p.name: untagged_contrasts(p.read_text(encoding="utf-8")) for p in (ROOT / "docs").glob("*.md")}
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_docs_quote_the_generated_files_kept_in_the_repository():
    """Tagged quotes of files other than the real run's (e.g. benchmarks/coverage.csv in docs/statistics.md, the
    kept study runs): always checked; docs/statistics.md quotes the coverage simulation."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]}
    kept = {
        name: "\n".join(
            line if not any(t.group(1).startswith("runs/real/") for t in TAG.finditer(line)) else ""
            for line in text.splitlines()
        )
        for name, text in texts.items()
    }
    assert {k: v for k, v in ((k, check_quotes(t, ROOT)) for k, t in kept.items()) if v} == {}
    assert kept["statistics.md"].count("<!-- quote: benchmarks/coverage.csv") == 10


def test_the_readme_and_docs_quote_the_real_runs_contrasts():
    """Every tagged contrast in the README and docs equals the real run's generated file under runs/real/, and
    the README has no untagged one; skipped until the real run's tables are kept in the repository."""
    if not REAL.exists():
        pytest.skip("runs/real/ (the real run's generated tables) is not in the repository yet")
    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    texts |= {f"docs/{p.name}": p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}
    problems = {name: check_quotes(text, ROOT) for name, text in texts.items()}
    problems["README.md"] += untagged_contrasts(texts["README.md"])
    assert {k: v for k, v in problems.items() if v} == {}


def test_a_tag_may_name_a_row_that_repeats(tmp_path):
    (tmp_path / "p.csv").write_text("model,method,delta\nGBERT,TSDAE,+3.10\nGBERT,WWM,+4.44\n")
    assert check_quotes("GBERT: TSDAE +3.10, WWM +4.44 <!-- quote: p.csv GBERT -->", tmp_path) == []
    assert check_quotes("GBERT: +3.11 <!-- quote: p.csv GBERT -->", tmp_path) == [
        "line 1: +3.11 is not in p.csv row 'GBERT'"
    ]


def test_a_tag_may_name_a_line_of_a_generated_markdown_file(tmp_path):
    (tmp_path / "t.md").write_text(
        "Table 6: V-measure x 100.\n\n| a | b |\n|---|---:|\n| x | 1.00 |\n\n"
        "- base: the un-adapted model.\n- Noise floor (3 seeds): Blurbs S2S: seed SD 0.80, Δ ≥ 1.38 against the base.\n"
    )
    assert check_quotes("detect Δ ≥ 1.38 (3 seeds) <!-- quote: t.md Noise floor -->", tmp_path) == []
    assert check_quotes("detect Δ ≥ 1.39 <!-- quote: t.md Noise floor -->", tmp_path) == [
        "line 1: 1.39 is not in t.md row 'Noise floor'"
    ]
    assert check_quotes("x 1.38 <!-- quote: t.md Seed floor -->", tmp_path) == ["line 1: t.md has no row 'Seed floor'"]
