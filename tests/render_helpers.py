"""The tables' entry point called the way the tests read best: positional inputs, keyword options."""

from __future__ import annotations

from pathlib import Path

from tecb.report import table_files as F

#: The paper's per-model results and its Table 1, as the workflow passes them.
REF = Path(__file__).resolve().parents[1] / "reference" / "paper_results.csv"
REF_TABLE1 = REF.with_name("paper_table1.csv")


def render(
    scores,
    datasets,
    texts,
    splits,
    names,
    configurations,
    table2,
    outputs,
    reference=None,
    reference_table1=None,
    *,
    log,
    statistics=None,
    metrics=("v_measure",),
    seed=42,
    chance_paths=None,
    per_kind=False,
):
    settings = F.TableSettings(
        datasets=list(datasets),
        model_names=dict(names),
        configurations=[tuple(c) for c in configurations],
        table2=table2,
        metrics=list(metrics),
        statistics=statistics,
        seed=seed,
        per_kind=per_kind,
    )
    inputs = F.TableInputs(
        scores=scores,
        texts=texts,
        splits=splits,
        chance=chance_paths,
        reference=reference,
        reference_table1=reference_table1,
    )
    F.render_tables(settings, inputs, outputs=outputs, log=log)


def render_vs_paper(scores, datasets, texts, splits, names, out) -> None:
    """:func:`render` of k-means on raw embeddings (Table 3's one configuration) beside the paper's tables."""
    kmeans = {"algorithm": "kmeans", "reduction": "none"}
    render(scores, datasets, texts, splits, names, [["kmeans", "none"]], kmeans, out, REF, REF_TABLE1,
           log=lambda m: None, seed=42)  # fmt: skip
