"""A report-stage job from its Snakemake job, resolved in one place (issue 45: one job adapter per stage).

Each function is one rule's whole job, given the ``snakemake`` object of its script (``job``): the files from its
inputs and outputs, the settings from its params (resolved in the rule; no script reads the config itself).
:func:`run_tables_job` is the tables job (:func:`tecb.report.table_files.render_tables`),
:func:`run_pretrain_report_job` the pretrain_report job (:func:`tecb.report.pretrain_tables.render`) and
:func:`run_adapt_report_job` the adapt_report job (:func:`tecb.report.adapt_tables.render`),
:func:`run_figures_job` the figures job (:mod:`tecb.report.figures`). The cluster_batch
job is :func:`tecb.report.cluster_batch.run_cluster_batch`.

Light at import: each function imports its tables' module itself, so that a job imports only its own (the tables
job none of the training reports').
"""

from __future__ import annotations


def table_outputs(out, *, stems, formats) -> dict[str, dict]:
    """Per table of ``stems``: format -> path, from ``out`` (a job's outputs: per stem its files in the order of
    ``formats``, and its html as ``{stem}_html``)."""
    return {stem: {**dict(zip(formats, getattr(out, stem))), "html": getattr(out, f"{stem}_html")} for stem in stems}


def run_tables_job(job, *, log=print) -> None:
    """The tables job: Tables 1-3 (and, with the paper's reference, the tables beside it) to the files the rule
    declares: per table of its params ``tables`` its ``formats`` and its html, each of ``csv_tables`` as CSV."""
    from tecb.report.table_files import TableInputs, TableSettings, render_tables

    p, inp, out = job.params, job.input, job.output
    outputs = table_outputs(out, stems=p.tables, formats=p.formats)
    outputs.update({stem: {"csv": getattr(out, stem)} for stem in p.csv_tables})
    reference, reference_table1 = inp.reference or [None, None]
    settings = TableSettings(
        datasets=p.datasets,
        model_names=p.model_names,
        model_notes=p.model_notes,
        configurations=[tuple(c) for c in p.configurations],
        table2=p.table2,
        metrics=p.metrics,
        statistics=p.statistics if p.statistics["enabled"] else None,
        seed=p.seed,
        per_kind=p.per_kind,
        trained_on=p.trained_on,
    )
    inputs = TableInputs(
        scores=inp.scores,
        texts=inp.texts,
        splits=inp.splits,
        chance=list(inp.chance) if p.chance else None,
        reference=reference,
        reference_table1=reference_table1,
        labels=_labels_inputs(job),
    )
    render_tables(settings, inputs, outputs=outputs, log=log)


def _labels_inputs(job) -> dict | None:
    """(model, dataset, reduction, algorithm) -> labels file, where the rule names them (input ``labels`` and
    param ``labels_keys``, in the same order); None: the rule gives none (the analytic test)."""
    paths = list(getattr(job.input, "labels", None) or [])
    keys = [tuple(k) for k in (getattr(job.params, "labels_keys", None) or [])]
    if len(paths) != len(keys):
        raise ValueError(f"the tables rule names {len(paths)} labels files but {len(keys)} labels_keys")
    return dict(zip(keys, paths)) if paths else None


def run_pretrain_report_job(job, *, log=print) -> None:
    """The pretrain_report job: Table 5, the best epochs, the comparison with the paper, the contrasts and Figure 2
    from the pre-training jobs' scores (params ``seed_keys``) and the un-adapted models' (``baseline_keys``)."""
    from tecb.report.paper import comparability
    from tecb.report.pretrain_tables import ReportInputs, Table5Rows, render
    from tecb.report.stats import Statistics
    from tecb.report.tables import split_kinds, split_overlaps

    inp, out, p = job.input, job.output, job.params
    outputs = {"scores": out.scores, "figure2": out.figure2}
    outputs.update(table_outputs(out, stems=("table5", "best_epochs", "table5_vs_paper"), formats=p.formats))
    outputs["contrasts"] = dict(zip(p.formats, out.contrasts))
    not_comparable = comparability(p.datasets, inp.splits)
    inputs = ReportInputs(
        keys=p.seed_keys,
        scores=inp.scores,
        baselines={tuple(key): path for key, path in zip(p.baseline_keys, inp.baselines)},
        reference=inp.reference,
        contrasts=p.contrasts,
        # tables.statistics.labels: the jobs' and the baselines' predictions (the text-level bootstrap)
        labels={tuple(key): path for key, path in zip(p.seed_keys, inp.get("labels", []))},
        baseline_labels={tuple(key): path for key, path in zip(p.baseline_keys, inp.get("baseline_labels", []))},
        splits=dict(zip(p.datasets, inp.splits)),
    )
    statistics, kinds = None, None
    if p.statistics["enabled"]:
        kinds = split_kinds(p.datasets, inp.splits)  # Blurbs' designs, as Tables 2 and 6
        overlaps = split_overlaps(p.datasets, inp.splits, kinds)  # splits subsampled from one pool, per kind
        statistics = Statistics.from_config(p.statistics, seed=p.seed, design_effects=overlaps)
    render(
        inputs,
        outputs,
        rows=Table5Rows(epochs=p.table_epochs, model_names=p.model_names),
        budgets=p.budgets,
        not_comparable=not_comparable,
        statistics=statistics,
        split_kinds=kinds,
        log=log,
    )


def run_adapt_report_job(job, *, log=print) -> None:
    """The adapt_report job: Table 6, the training curves, the training costs and the contrasts from the training
    jobs' scores and timings (params ``jobs``), with the chance rows where the rule gives ``chance`` files."""
    from tecb.report.adapt_tables import ReportInputs, render
    from tecb.report.stats import Statistics
    from tecb.report.tables import split_kinds, split_overlaps

    inp, out, p = job.input, job.output, job.params
    outputs = {
        "scores": out.scores,
        "figure": out.figure,
        **table_outputs(out, stems=("table6",), formats=p.formats),
        "costs": dict(zip(("md", "csv"), out.costs)),
        "contrasts": dict(zip(p.formats, out.contrasts)),
    }
    inputs = ReportInputs(
        keys=p.jobs,
        scores=inp.scores,
        timings=inp.timings,
        chance=dict(zip(p.datasets, inp.chance)),  # empty when tables.chance is off
        labels=list(inp.get("labels", [])),  # empty when tables.statistics.labels is off
    )
    kinds = split_kinds(p.datasets, inp.splits)  # Blurbs' designs, as Table 2 stratifies them
    overlaps = split_overlaps(p.datasets, inp.splits, kinds)  # splits subsampled from one pool
    render(
        inputs,
        outputs,
        statistics=Statistics.from_config(p.statistics, seed=p.seed, design_effects=overlaps),
        model_names=p.model_names,
        split_kinds=kinds,
        contrasts_declared=p.contrasts,
        log=log,
    )


def run_figures_job(job, *, log=print) -> None:
    """The figures job: a UMAP scatter plot per (model, dataset) of params ``pairs``, the Table 3 heatmap and the
    Table 2 averages bar chart, the paper's averages beside them only where the datasets are comparable."""
    import pandas as pd

    from tecb.report import figures, tables
    from tecb.report import paper as published

    p, inp, out = job.params, job.input, job.output
    for (model, dataset), reduced, splits, png, svg in zip(p.pairs, inp.reduced, p.splits, out.umap_png, out.umap_svg):
        figures.umap_figure(reduced, splits, [png, svg], title=f"{p.model_names[model]} / {dataset}")
    summary = tables.summarize(pd.read_parquet(inp.scores))
    t3, n_models = tables.table3(summary, [tuple(c) for c in p.configurations], datasets=p.datasets)
    title = f"Table 3: V-measure x 100, mean over {n_models} model(s)"
    figures.heatmap_figure(t3, [out.heatmap, out.heatmap_svg], title)
    t2 = tables.table2(summary, p.model_names, datasets=p.datasets, **p.table2)
    # the paper's averages only beside averages over the same six datasets, built comparably (their provenance)
    why_not = published.paper_average_not_comparable(
        p.datasets, published.comparability(p.datasets, inp.dataset_splits)
    )
    paper = published.paper_table2(inp.reference[0])["Average"] if inp.reference and not why_not else None
    figures.bar_figure(
        t2["Average"],
        [out.bars, out.bars_svg],
        figures.averages_title(p.datasets),
        reference=paper,
        no_reference_because=why_not if inp.reference else "",
    )
    log(f"{len(p.pairs)} UMAP figures, heatmap, bar chart")


def run_mteb_results_job(job, *, log=print) -> None:
    """The mteb_results job: MTEB-format results per (model, dataset) of params ``pairs`` and a model meta per
    ``meta_models`` (:func:`tecb.report.mteb_results.write_mteb_results`), with each dataset's provenance and the
    hub revisions resolved by the models' download jobs (``revision_files`` that exist)."""
    from pathlib import Path

    from tecb.io import dataset_provenance
    from tecb.report.mteb_results import ResultFiles, write_mteb_results

    p, inp, out = job.params, job.input, job.output
    targets = [(model, dataset, path) for (model, dataset), path in zip(p.pairs, out.results)]
    provenance = {d: dataset_provenance(s) for d, s in zip(p.datasets, inp.splits)}
    resolved = {m: Path(f).read_text().strip() for m, f in p.revision_files.items() if Path(f).exists()}
    write_mteb_results(
        ResultFiles(scores=inp.scores, results=targets, metas=list(zip(p.meta_models, out.meta))),
        p.models,
        mteb_tasks=dict(p.mteb_tasks),
        provenance=provenance,
        resolved_revisions=resolved,
        log=log,
    )


def run_truncation_job(job, *, log=print) -> None:
    """The truncation job: the share of texts cut at each model's max_seq_length per (model, dataset) of params
    ``pairs`` (:func:`tecb.report.extras.truncation_table`), as CSV and HTML."""
    from tecb.io import write_text
    from tecb.report.extras import truncation_table
    from tecb.report.render import to_html

    p = job.params
    table = truncation_table(dict(zip(map(tuple, p.pairs), job.input)), p.model_names, p.datasets)
    write_text(table.to_csv(), job.output.csv)
    caption = (
        "Texts truncated at the model's max_seq_length, in percent of the dataset's texts "
        "(in brackets: the share of all tokens the encoder saw)."
    )
    footnotes = ["n/a: not recorded (TF-IDF has no length limit)."]
    write_text(to_html(table, caption=caption, footnotes=footnotes), job.output.html)
    log(table.to_string())


def run_leaderboard_job(job, *, log=print) -> None:
    """The leaderboard job: MTEB's published German clustering scores beside the run's
    (:mod:`tecb.report.leaderboard`), as CSV, Markdown and HTML."""
    import pandas as pd

    from tecb.io import write_text
    from tecb.report import leaderboard as board
    from tecb.report.render import markdown_table_html
    from tecb.report.tables import summarize

    p, inp, out = job.params, job.input, job.output
    ours = board.ours_paper(summarize(pd.read_parquet(inp.scores)), p.tasks)
    if inp.v2:
        ours = pd.concat([ours, board.ours_v2(pd.read_csv(inp.v2))], ignore_index=True)
    identities = {m: tuple(v) for m, v in p.identities.items()}
    published, missing = board.read_published(inp.published), board.read_missing(inp.published)
    table = board.leaderboard(published, ours, identities, p.names, missing=missing)
    write_text(table.round(6).to_csv(index=False), out.csv)
    write_text(board.to_markdown(table), out.md)
    write_text(markdown_table_html(board.to_markdown(table), board.CAPTION), out.html)
    log(board.to_markdown(table))
