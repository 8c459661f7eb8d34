"""The tables' entry point called the way the tests read best: positional inputs, keyword options."""

from __future__ import annotations

from tecb.report import table_files as F


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
    F.render_tables(
        settings,
        scores,
        texts,
        splits,
        outputs=outputs,
        reference=reference,
        reference_table1=reference_table1,
        chance_paths=chance_paths,
        log=log,
    )
