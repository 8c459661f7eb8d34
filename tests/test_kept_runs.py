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
    (results / "scores.parquet").unlink()
    # Table 5 only: Table 2's part stays
    assert _kept(results, tmp_path / "runs" / "r", config) == [
        "config/c.yaml",
        "pretrain/table5.md",
        "provenance.json",
        "scores.parquet",
        "tables/table2.csv",
        "tables/table2.md",
        "timings/pretrain/minilm/tsdae/seed1.json",
    ]
    (results / "adapt" / "minilm").mkdir(parents=True)
    (results / "adapt" / "table6.md").write_text("| m | 3 |\n")
    (results / "adapt" / "contrasts.csv").write_text("c,1\n")
    (results / "adapt" / "minilm" / "seed1.parquet").write_bytes(b"PAR1")  # not kept: the per-job scores
    (results / "timings" / "adapt").mkdir(parents=True)
    (results / "timings" / "adapt" / "costs.md").write_text("| job | s |\n")
    (results / "pretrain" / "table5.md").write_text("| m | 2.5 |\n")
    # Table 5 again, Table 6
    assert _kept(results, tmp_path / "runs" / "r", config) == [
        "adapt/contrasts.csv",
        "adapt/table6.md",
        "config/c.yaml",
        "pretrain/table5.md",
        "provenance.json",
        "scores.parquet",
        "tables/table2.csv",
        "tables/table2.md",
        "timings/adapt/costs.md",
        "timings/pretrain/minilm/tsdae/seed1.json",
    ]
    assert (tmp_path / "runs" / "r" / "pretrain" / "table5.md").read_text() == "| m | 2.5 |\n"  # its part replaced
    with pytest.raises(FileNotFoundError, match="no tables/, pretrain/ or adapt/ tables to keep"):
        kept.keep_run(tmp_path / "empty", tmp_path / "runs" / "e", configs=[])


def _fake_results(folder, *, run: str, adapt: str | None):
    """A small finished run's results: Table 2's part (tables, scores, chance, benchmarks) labelled ``run``, and with
    ``adapt`` Table 6's part (as `make real-adapt` leaves results/real: both)."""
    files = {
        "tables/table2.md": f"| {run} | 1 |\n",
        "tables/table2.csv": f"{run},1\n",
        "scores.parquet": f"PAR1{run}",
        "chance/BlurbsClusteringS2S.parquet": f"PAR1{run}",
        "benchmarks/cluster/m/BlurbsClusteringS2S/batch.tsv": f"s\n{run}\n",
        "embeddings/m/BlurbsClusteringS2S.parquet": "not kept",
    }
    if adapt:
        files |= {
            "adapt/table6.md": f"| {adapt} | 6 |\n",
            "adapt/scores.parquet": f"PAR1{adapt}",
            "timings/adapt/costs.md": f"| {adapt} |\n",
            "timings/adapt/minilm/cob/lodo/BlurbsClusteringS2S/seed1.json": f'{{"s": "{adapt}"}}',
            "benchmarks/adapt/minilm/cob/lodo/BlurbsClusteringS2S/seed1.tsv": f"s\n{adapt}\n",
        }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _kept_bytes(dest) -> dict:
    return {str(p.relative_to(dest)): p.read_bytes() for p in sorted(dest.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("order", ["real, then real-adapt", "real-adapt, then real"])
def test_kept_runs_that_targets_share(tmp_path, order):
    """`make real` wrote runs/real/ anew and deleted the Table 6 `make real-adapt` had kept there (53 tracked files).
    Both keep steps, in either order, on small results folders: each replaces only the part its results hold."""
    real_yaml, adapt_yaml = tmp_path / "real.yaml", tmp_path / "real-adapt.yaml"
    real_yaml.write_text("run: real\n")
    adapt_yaml.write_text("adapt: {enabled: true}\n")
    real = _fake_results(tmp_path / "clean" / "results" / "real", run="second table 2", adapt=None)
    both = _fake_results(tmp_path / "adapted" / "results" / "real", run="first table 2", adapt="table 6")
    dest = tmp_path / "runs" / "real"
    steps = [(real, [real_yaml]), (both, [real_yaml, adapt_yaml])]
    if order.startswith("real-adapt"):
        steps.reverse()
    kept.keep_run(steps[0][0], dest, configs=steps[0][1])
    first = _kept_bytes(dest)
    kept.keep_run(steps[1][0], dest, configs=steps[1][1])
    second = _kept_bytes(dest)
    adapt_files = [f for f in second if kept.part_of(f) == "adapt"]
    assert len(adapt_files) == 5 and "config/real-adapt.yaml" in second
    table2 = "first table 2" if order.startswith("real,") else "second table 2"
    assert second["tables/table2.md"] == f"| {table2} | 1 |\n".encode()  # the last keep's Table 2
    provenance = json.loads(second["provenance.json"])
    assert set(provenance["parts"]) == {"run", "adapt"}
    assert provenance["parts"]["adapt"]["configs"] == ["real.yaml", "real-adapt.yaml"]
    if order.startswith("real-adapt"):  # `make real` after `make real-adapt`: Table 6 as it was, byte for byte
        assert {f: second[f] for f in adapt_files} == {f: first[f] for f in adapt_files}
        assert provenance["configs"] == ["real.yaml"]


def test_keeping_real_leaves_the_kept_table6_as_it_was(tmp_path):
    """runs/real as the repository keeps it (Table 2 and Table 6 of all-MiniLM-L6-v2), then `make real`'s keep step
    from a clean clone's results (no adapt/): every file of Table 6's part unchanged."""
    dest = tmp_path / "runs" / "real"
    shutil.copytree(ROOT / "runs" / "real", dest)
    before = _kept_bytes(dest)
    adapt_before = {f: b for f, b in before.items() if kept.part_of(f) == "adapt"}
    assert len(adapt_before) >= 40
    results = _fake_results(tmp_path / "results" / "real", run="new table 2", adapt=None)
    kept.keep_run(results, dest, configs=[ROOT / "config" / "real.yaml"])
    after = _kept_bytes(dest)
    assert {f: b for f, b in after.items() if kept.part_of(f) == "adapt"} == adapt_before
    assert after["config/real-adapt.yaml"] == before["config/real-adapt.yaml"]
    assert after["tables/table2.md"] == b"| new table 2 | 1 |\n"
    assert "tables/table3.md" not in after  # Table 2's part replaced as a whole by the new run's


@pytest.mark.workflow
def test_rerendering_the_kept_demo_writes_its_kept_tables_again(tmp_path):
    """`python -m tecb.report.kept --rerender runs/demo` (make rerender): Tables 1-3 rendered again from the kept
    scores and chance draws (the datasets rebuilt, nothing embedded or clustered) are the kept files byte for byte;
    a changed kept score changes them, and the provenance records the rendering commit."""
    from conftest import copy_project

    work = copy_project(tmp_path / "p")
    demo = tmp_path / "runs" / "demo"
    shutil.copytree(ROOT / "runs" / "demo", demo)
    before = {p.name: p.read_bytes() for p in (demo / "tables").iterdir()}
    (demo / "tables" / "table2.md").write_text("stale\n")
    written = kept.rerender_tables(demo, workdir=work, log=lambda m: None)
    assert {p.name for p in written} >= {"table1.md", "table2.md", "table2_statistics.csv", "table3.csv"}
    assert {p.name: p.read_bytes() for p in (demo / "tables").iterdir()} == before
    provenance = json.loads((demo / "provenance.json").read_text())
    assert provenance["parts"]["run"]["configs"] == ["demo.yaml"] and "commit" in provenance["parts"]["run"]["rendered"]
    # the tables come from the kept scores: one model's V-measure lowered moves its Table 2 row
    import pandas as pd

    scores = pd.read_parquet(demo / "scores.parquet")
    scores.loc[scores.model == scores.model.iloc[0], "v_measure"] *= 0.5
    scores.to_parquet(demo / "scores.parquet")
    kept.rerender_tables(demo, workdir=work, log=lambda m: None)
    assert (demo / "tables" / "table2.md").read_bytes() != before["table2.md"]
    with pytest.raises(FileNotFoundError, match="no scores.parquet"):
        kept.rerender_tables(tmp_path / "runs", workdir=work)


def test_refresh_kept_blocks_copies_each_file_into_its_blocks(tmp_path):
    from tecb.report.quotes import refresh_kept_blocks

    (tmp_path / "runs" / "x").mkdir(parents=True)
    (tmp_path / "runs" / "x" / "t.md").write_text("| a | 2.00 |\n")
    text = "before\n<!-- kept: runs/x/t.md -->\n| a | 1.00 |\n<!-- /kept -->\nafter 1.00\n"
    new = refresh_kept_blocks(text, tmp_path)
    assert new == "before\n<!-- kept: runs/x/t.md -->\n| a | 2.00 |\n<!-- /kept -->\nafter 1.00\n"
    assert refresh_kept_blocks(new, tmp_path) == new


def test_keep_run_keeps_the_labels_of_table2s_configuration(tmp_path):
    """The predictions behind Table 2 (every text's cluster per split, per state at R > 1) travel with the kept
    run, so a statistic recomputed from the texts can be rendered again; the other configurations' stay out."""
    results = tmp_path / "results" / "r"
    (results / "tables").mkdir(parents=True)
    (results / "tables" / "table2.md").write_text("| m | 1 |\n")
    for reduction in ("none", "pca"):
        for algorithm in ("kmeans", "agglomerative"):
            path = results / "labels" / "m" / "D" / reduction / f"{algorithm}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f"{reduction}/{algorithm}".encode())
    config = tmp_path / "c.yaml"
    config.write_text("run: r\n")
    assert [p for p in _kept(results, tmp_path / "runs" / "a", config) if p.startswith("labels/")] == [
        "labels/m/D/none/kmeans.parquet"
    ]
    other = tmp_path / "o.yaml"
    other.write_text("tables: {table2: {reduction: pca}}\n")
    kept.keep_run(results, tmp_path / "runs" / "b", configs=[config, other])
    labels = sorted(
        p.relative_to(tmp_path / "runs" / "b").as_posix() for p in (tmp_path / "runs" / "b").rglob("*.parquet")
    )
    assert labels == ["labels/m/D/pca/kmeans.parquet"]
