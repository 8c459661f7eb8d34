"""Numbers the README and the docs quote come from runs the repository keeps (runs/, tecb.report.kept): every
``<!-- kept: PATH -->`` block equals its file, and the check can fail."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT

from tecb.report import kept
from tecb.report.quotes import kept_blocks

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_quote_of_a_kept_file_is_that_file(document):
    for path, text in kept_blocks(document.read_text(encoding="utf-8")):
        source = ROOT / path
        assert source.is_file(), f"{document.name} quotes {path}, which the repository does not keep"
        assert path.startswith("runs/"), f"{document.name} quotes {path}: kept files live under runs/"
        assert text.strip() == source.read_text(encoding="utf-8").strip(), f"{document.name}: {path} changed"


def test_the_docs_quote_the_kept_e5_comparison():
    quoted = [path for path, _ in kept_blocks((ROOT / "docs" / "real-run.md").read_text(encoding="utf-8"))]
    assert "runs/real-e5/tables/table2.md" in quoted


def test_a_changed_number_is_caught(tmp_path):
    text = "<!-- kept: runs/x/t.md -->\n| a | 1.00 |\n<!-- /kept -->\n"
    assert kept_blocks(text) == [("runs/x/t.md", "| a | 1.00 |\n")]
    assert kept_blocks(text.replace("1.00", "1.01"))[0][1] != "| a | 1.00 |\n"


def _kept(results, dest, config) -> list[str]:
    """The files :func:`tecb.report.kept.keep_run` keeps of ``results`` in ``dest``."""
    kept.keep_run(results, dest, configs=[config])
    return sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())


def test_keep_run_copies_tables_scores_and_configs(tmp_path):
    results = tmp_path / "results" / "r"
    (results / "tables").mkdir(parents=True)
    (results / "tables" / "table2.md").write_text("| m | 1 |\n")
    (results / "tables" / "table2.csv").write_text("m,1\n")
    (results / "scores.parquet").write_bytes(b"PAR1")
    (results / "embeddings").mkdir()
    (results / "embeddings" / "big.parquet").write_bytes(b"x")  # not kept: too large, recomputable
    config = tmp_path / "c.yaml"
    config.write_text("run: r\n")
    assert _kept(results, tmp_path / "runs" / "r", config) == [
        "config/c.yaml",
        "provenance.json",
        "scores.parquet",
        "tables/table2.csv",
        "tables/table2.md",
    ]
    provenance = json.loads((tmp_path / "runs" / "r" / "provenance.json").read_text())
    assert provenance["configs"] == ["c.yaml"] and provenance["blas"]  # e.g. ["openblas Haswell"]
    assert all(isinstance(k, str) and k for k in provenance["blas"])
    (results / "pretrain" / "minilm").mkdir(parents=True)
    (results / "pretrain" / "table5.md").write_text("| m | 2 |\n")
    (results / "pretrain" / "minilm" / "seed1.parquet").write_bytes(b"PAR1")  # not kept: the per-job scores
    (results / "timings" / "pretrain" / "minilm" / "tsdae").mkdir(parents=True)
    (results / "timings" / "pretrain" / "minilm" / "tsdae" / "seed1.json").write_text("{}")
    shutil.rmtree(results / "tables")
    assert _kept(results, tmp_path / "runs" / "r", config) == [
        "config/c.yaml",
        "pretrain/table5.md",
        "provenance.json",
        "scores.parquet",
        "timings/pretrain/minilm/tsdae/seed1.json",
    ]
    (results / "adapt" / "minilm").mkdir(parents=True)
    (results / "adapt" / "table6.md").write_text("| m | 3 |\n")
    (results / "adapt" / "contrasts.csv").write_text("c,1\n")
    (results / "adapt" / "minilm" / "seed1.parquet").write_bytes(b"PAR1")  # not kept: the per-job scores
    (results / "timings" / "adapt").mkdir(parents=True)
    (results / "timings" / "adapt" / "costs.md").write_text("| job | s |\n")
    shutil.rmtree(results / "pretrain")
    shutil.rmtree(results / "timings" / "pretrain")
    assert _kept(results, tmp_path / "runs" / "r", config) == [
        "adapt/contrasts.csv",
        "adapt/table6.md",
        "config/c.yaml",
        "provenance.json",
        "scores.parquet",
        "timings/adapt/costs.md",
    ]
    with pytest.raises(FileNotFoundError, match="no tables/, pretrain/ or adapt/ tables to keep"):
        kept.keep_run(tmp_path / "empty", tmp_path / "runs" / "e", configs=[])
