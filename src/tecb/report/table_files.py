"""The tables rule's entry point: scores + datasets -> every table file, by key (``render_tables``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import pandas as pd

from tecb.data.datasets import target_text
from tecb.io import dataset_provenance, write_text
from tecb.report.paper import (
    comparability,
    comparability_line,
    comparability_notes,
    compare,
    paper_table1,
    paper_table2,
    paper_table3,
)
from tecb.report.render import FORMATS, stem_paths, to_csv, to_markdown, write_formats
from tecb.report.stats import Statistics
from tecb.report.tables import (
    CHANCE_ROW,
    METRIC_LABELS,
    PAPER_DATASETS,
    STATISTICS_DEFAULTS,
    TABLE1_LABELS,
    average_groups,
    dataset_stats,
    label_average,
    read_keyed,
    split_overlaps,
    summarize,
    table1,
    table1_display,
    table2,
    table2_statistics,
    table3,
)
from tecb.report.tables import split_kinds as read_split_kinds


def collect_scores(score_paths, keys, out_path, log=print) -> pd.DataFrame:
    """Concatenate per-configuration score files into one long table; ``keys`` gives each file's
    ``(model, dataset, reduction, algorithm)`` in the order of ``score_paths`` (the rule names them). Each file is
    verified first (:func:`tecb.io.check_scores`): a damaged, edited or swapped one is an error naming it."""
    import pyarrow as pa

    from tecb.io import check_scores, write_table

    frames = read_keyed(score_paths, keys, ("model", "dataset", "reduction", "algorithm"))
    for path, key in zip(score_paths, keys, strict=True):
        check_scores(path, "/".join(key))  # the content its writer recorded, of this configuration
    scores = pd.concat(frames, ignore_index=True)
    write_table(pa.Table.from_pandas(scores, preserve_index=False), out_path)
    log(f"{len(frames)} score files, {len(scores)} rows -> {out_path}")
    return scores


CSV_ONLY = ("table2_statistics", "intervals", "chance")


@dataclass(frozen=True, kw_only=True)
class TableSettings:
    """What the tables show (the ``tables`` config section, resolved): ``datasets`` and ``model_names`` (key ->
    display name) in config order, the ``configurations`` of Table 3 ((algorithm, reduction) pairs), Table 2's
    ``table2`` configuration (``algorithm``, ``reduction``), the ``metrics`` (a table pair per metric besides the
    V-measure), ``statistics`` (keys of :data:`tecb.report.tables.STATISTICS_DEFAULTS`; None = off), the
    ``seed`` of the bootstrap and ``per_kind`` (the per-split-kind table, ``table2_per_kind``); ``model_notes``
    (key -> text, the models' ``note``) become a footnote of Table 2."""

    datasets: Sequence[str]
    model_names: Mapping[str, str]
    configurations: Sequence[tuple[str, str]]
    table2: Mapping[str, str]
    metrics: Sequence[str]
    statistics: Mapping | None
    seed: int
    per_kind: bool
    model_notes: Mapping[str, str] = field(default_factory=dict)
    #: model key -> datasets whose data the model was trained on (mteb's training_datasets: tables/models.csv);
    #: those Table 2 cells are marked ``§`` with a footnote
    trained_on: Mapping[str, Sequence[str]] | None = None

    @property
    def statistics_on(self) -> bool:
        return self.statistics is not None and {**STATISTICS_DEFAULTS, **self.statistics}["enabled"]

    @property
    def statistics_used(self) -> Mapping | None:
        """``statistics`` when on, else None."""
        return self.statistics if self.statistics_on else None

    @property
    def statistics_options(self) -> dict:
        """The statistics options in use, defaults filled in (all defaults when off)."""
        return {**STATISTICS_DEFAULTS, **(self.statistics_used or {})}

    @property
    def statistics_spec(self) -> Statistics:
        """:attr:`statistics_options` with the ``seed``, as a :class:`tecb.report.stats.Statistics` (all defaults
        when off: the per-kind table and the chance floor draw their intervals with them)."""
        return Statistics.from_config(self.statistics_options, seed=self.seed)


@dataclass(frozen=True, kw_only=True)
class TableInputs:
    """The files the tables are computed from: ``scores`` (the long scores table, :func:`collect_scores`), the
    ``texts`` and ``splits`` files of each dataset of the settings (in their order), ``chance`` (one
    :func:`tecb.scoring.chance.run` file per dataset, in the same order; None: no chance rows) and the paper's
    ``reference`` Tables 2-3 and ``reference_table1`` (None: no ``table{1,2,3}_vs_paper``)."""

    scores: str | Path
    texts: Sequence
    splits: Sequence
    chance: Sequence | None = None
    reference: str | Path | None = None
    reference_table1: str | Path | None = None
    #: (model, dataset, reduction, algorithm) -> that cluster job's labels file (``split``, ``text_id``,
    #: ``cluster``[, ``state``]): Table 2's differences are then tested by the paired text-level bootstrap over the
    #: predictions (:mod:`tecb.report.bootstrap`); None: the analytic test of the per-split scores
    labels: Mapping[tuple, str | Path] | None = None


def model_notes(notes: Mapping[str, str], model_names: Mapping[str, str]) -> list[str]:
    """Table 2's footnote of the models' ``note`` settings, in the table's order (none: no footnote)."""
    shown = [f"{model_names.get(key, key)}: {notes[key]}" for key in (model_names or notes) if notes.get(key)]
    return ["Models: " + "; ".join(shown) + "."] if shown else []


TRAINED_MARK = "§"


def mark_trained(table: pd.DataFrame, marks: pd.DataFrame | None, model_names, trained_on):
    """Table 2's suffixes with :data:`TRAINED_MARK` on the cells of models trained on that dataset's data, and the
    footnote saying so (none when no cell is marked)."""
    if not trained_on:
        return marks, []
    marks = marks.copy() if marks is not None else pd.DataFrame("", index=table.index, columns=table.columns)
    marked = 0
    for key, datasets in trained_on.items():
        row = (model_names or {}).get(key, key)
        for dataset in datasets:
            if row in marks.index and dataset in marks.columns and pd.notna(table.at[row, dataset]):
                marks.at[row, dataset] = f"{marks.at[row, dataset]}{TRAINED_MARK}"
                marked += 1
    if not marked:
        return marks, []
    return marks, [
        "§: the model was trained on this dataset's data (mteb's training_datasets, tables/models.csv): not a "
        "zero-shot score."
    ]


def table_keys(
    reference: bool,
    metrics=("v_measure",),
    statistics: bool = False,
    *,
    per_kind: bool = False,
    chance: bool = False,
) -> list[str]:
    """The keys of the ``outputs`` :func:`render_tables` writes: ``table1``-``table3``, with a reference
    ``table{1,2,3}_vs_paper``, ``table{2,3}_{metric}`` per further metric, ``table2_per_kind`` with ``per_kind``
    (each format -> path), and, CSV only (``{"csv": path}``), with statistics ``table2_statistics`` and
    ``intervals``, with ``chance`` the random-partition floor ``chance``."""
    keys = ["table1", "table2", "table3"]
    keys += ["table1_vs_paper", "table2_vs_paper", "table3_vs_paper"] if reference else []
    keys += [f"table{n}_{m}" for m in metrics if m != "v_measure" for n in (2, 3)]
    keys += ["table2_per_kind"] if per_kind else []
    keys += ["table2_statistics", "intervals"] if statistics else []
    keys += ["chance"] if chance else []
    return keys


def outputs_in(directory, keys) -> dict[str, dict[str, Path]]:
    """``{key: {format: directory/key.format}}`` for :func:`render_tables` called outside the workflow (the
    tables rule passes its declared outputs); the statistics and chance files are CSV only."""
    return {k: stem_paths(Path(directory) / k, ("csv",) if k in CSV_ONLY else FORMATS) for k in keys}


def _check_outputs(outputs, keys) -> None:
    missing, extra = [k for k in keys if k not in outputs], sorted(set(outputs) - set(keys))
    if missing or extra:
        raise ValueError(
            "tables: the outputs given do not match the tables to write: "
            + "; ".join(
                p for p in (f"missing {missing}" if missing else "", f"not written {extra}" if extra else "") if p
            )
        )
    for key in CSV_ONLY:
        if key in outputs and set(outputs[key]) != {"csv"}:
            raise ValueError(f"tables: {key} is written as CSV only, not {sorted(outputs[key])}")


def _write(table, paths, caption, *, csv_table, **options) -> None:
    """``table`` to the formats of ``paths`` except CSV, which gets ``csv_table`` (the table without its chance
    row: the CSV has one row per model or configuration; the chance numbers are in ``chance.csv``)."""
    write_formats(table, {k: v for k, v in paths.items() if k != "csv"}, caption, **options)
    if "csv" in paths:
        write_text(to_csv(csv_table, options.get("decimals", 2)), paths["csv"])


class _Chance:
    """The random-partition floor of every (column, metric) of a run (:mod:`tecb.report.chance`)."""

    def __init__(self, datasets, chance_paths, split_kinds, confidence: float):
        from tecb.report.chance import chance_summary

        self.rows = {d: pd.read_parquet(p) for d, p in zip(datasets, chance_paths)}
        columns = list(datasets)
        self.n_draws = int(next(iter(self.rows.values())).draw.nunique()) if self.rows else 0
        self.confidence = confidence
        self.summary = pd.concat(
            [
                chance_summary(
                    self.rows,
                    metric=m,
                    confidence=confidence,
                    averages=average_groups(columns),
                    split_kinds=split_kinds,
                ).assign(metric=m)
                for m in ("v_measure", "ami", "ari", "homogeneity", "completeness")
            ],
            ignore_index=True,
        )

    def add_row(self, table: pd.DataFrame, suffix: pd.DataFrame | None, metric: str, columns=None, kinds=None):
        """``table`` with the chance row appended and every cell not above the chance range marked ‡ in the
        returned suffix (:func:`tecb.report.chance.add_chance_row`). ``columns``/``kinds``: the (dataset, kind)
        of each column (default: the column itself, no kind)."""
        from tecb.report.chance import add_chance_row

        keys = list(zip(columns or table.columns, kinds or [""] * len(table.columns)))
        return add_chance_row(table, suffix, self.summary[self.summary.metric == metric], keys)

    def note(self) -> str:
        return (
            f"{CHANCE_ROW}: the expected score of a partition of each split into as many random clusters as it has "
            f"labels (mean over splits; [low, high]: its {self.confidence:.0%} range over {self.n_draws} seeded "
            "draws); ‡: not above that range's upper end, so not distinguishable from chance."
        )


def render_tables(settings: TableSettings, inputs: TableInputs, *, outputs, log=print) -> None:
    """Write Tables 1-3 and, with a ``reference``, ``table{1,2,3}_vs_paper`` to exactly the files of ``outputs``.

    ``inputs``: the files read (:class:`TableInputs`). ``outputs`` maps each key of :func:`table_keys` to
    ``{format: path}`` (formats of :data:`FORMATS`; the tables rule passes its declared outputs; :func:`outputs_in`
    names them in a folder); a directory is accepted as ``outputs_in(directory, table_keys(...))``.
    ``settings.statistics`` adds bootstrap intervals and significance marks to Table 2 and writes
    ``table2_statistics`` and ``intervals`` (stratified by split kind for the datasets that record kinds); each
    further metric adds ``table2_{metric}`` and ``table3_{metric}``; ``inputs.chance`` (one :func:`tecb.scoring.chance.run`
    file per dataset) add the chance row under every score table and ``chance``; ``settings.per_kind`` writes
    ``table2_per_kind``. An ``Average`` over fewer than the paper's six datasets is headed ``Average (k of the
    paper's 6)``.
    """
    run = _prepare(settings, inputs, outputs)
    t1 = _write_table1(run, inputs.texts, inputs.splits)
    long = None
    for metric in dict.fromkeys(["v_measure", *settings.metrics]):
        if metric not in run.scores.columns:
            raise ValueError(f"tables.metrics: {metric!r} is not a column of the scores")
        v = metric == "v_measure"
        summary = summarize(run.scores) if v else summarize(run.keep, metric)
        long_m, chance_notes, (t2, marks) = _write_table2(run, metric, summary)
        long = long_m if v else long
        t3, marks3 = _write_table3(run, metric, summary, chance_notes)
        log(to_markdown(t2, mark_best=True, suffix=marks))
        if v:
            log(to_markdown(t3, mark_best=True, suffix=marks3))
    if long is not None:
        _write_statistics(run, long)
    if run.chance is not None:
        write_text(run.chance.summary.round(6).to_csv(index=False), run.outputs["chance"]["csv"])
    if settings.per_kind:
        _per_kind_table(run, log)
    if inputs.reference is not None:
        _write_vs_paper(run, t1, inputs.reference, inputs.reference_table1)


@dataclass(frozen=True)
class _Run:
    """What every table of one :func:`render_tables` call reads: its settings and outputs, the scores, the split
    kinds, the chance floor (None: no chance row) and which datasets are not comparable with the paper's."""

    settings: TableSettings
    outputs: dict
    scores: pd.DataFrame
    kinds: dict
    chance: _Chance | None
    not_comparable: dict
    #: dataset -> the overlap of its splits (:func:`tecb.report.tables.split_overlaps`), for the mean test
    overlaps: dict = field(default_factory=dict)
    #: the paired bootstrap over the saved predictions (:func:`table_pairs`), or None
    pairs: object | None = None

    @cached_property
    def datasets(self) -> list[str]:
        return list(self.settings.datasets)

    @cached_property
    def model_names(self) -> dict[str, str]:
        return dict(self.settings.model_names)

    @cached_property
    def keep(self) -> pd.DataFrame:
        """The scores of the configured models (all of them without ``model_names``)."""
        return self.scores[self.scores.model.isin(list(self.model_names))] if self.model_names else self.scores

    @property
    def statistics(self) -> Mapping | None:
        return self.settings.statistics_used

    @cached_property
    def opts(self) -> dict:
        return self.settings.statistics_options

    @cached_property
    def spec(self) -> Statistics:
        return replace(self.settings.statistics_spec, design_effects=self.overlaps, pairs=self.pairs)

    @cached_property
    def nc_notes(self) -> list[str]:
        """The footnotes on datasets not comparable with the paper's."""
        paper = {d: r for d, r in self.not_comparable.items() if d in PAPER_DATASETS}
        return comparability_notes(paper, self.datasets)

    @cached_property
    def nc_plain(self) -> list[str]:
        """:attr:`nc_notes` for the tables without a delta column."""
        return [n.replace(", so no Δ", "") for n in self.nc_notes]

    @cached_property
    def cfg(self) -> str:
        """Table 2's configuration in words."""
        red = self.settings.table2["reduction"]
        return f"{self.settings.table2['algorithm']} on {'raw' if red == 'none' else red + '-reduced'} embeddings"

    def status_line(self) -> list[str]:
        status = comparability_line(self.not_comparable, self.datasets)
        return [status] if status else []


def _prepare(settings: TableSettings, inputs: TableInputs, outputs) -> _Run:
    """Check ``outputs`` against the tables to write and read what they share (:class:`_Run`)."""
    datasets = list(settings.datasets)
    keys = table_keys(
        inputs.reference is not None,
        settings.metrics,
        settings.statistics_on,
        per_kind=settings.per_kind,
        chance=inputs.chance is not None,
    )
    if isinstance(outputs, (str, Path)):
        outputs = outputs_in(outputs, keys)
    _check_outputs(outputs, keys)
    kinds = read_split_kinds(datasets, inputs.splits)
    confidence = settings.statistics_spec.confidence
    chance = _Chance(datasets, inputs.chance, kinds, confidence) if inputs.chance is not None else None
    scores = pd.read_parquet(inputs.scores)
    overlaps = split_overlaps(datasets, inputs.splits, kinds)
    pairs = table_pairs(datasets, inputs.splits, inputs.labels, seed=settings.seed) if inputs.labels else None
    return _Run(settings, outputs, scores, kinds, chance, comparability(datasets, inputs.splits), overlaps, pairs)


def table_pairs(datasets, splits_paths, labels: Mapping[tuple, str | Path], *, seed: int):
    """The :class:`tecb.report.bootstrap.TablePairs` of a run: each dataset's splits file (its pool and true
    labels) and the labels file of each (model, dataset, reduction, algorithm) of ``labels`` on those datasets."""
    from tecb.report.bootstrap import TablePairs, split_predictions

    splits = {d: pd.read_parquet(p, columns=["split", "text_id", "label"]) for d, p in zip(datasets, splits_paths)}
    predictions = {
        tuple(key): split_predictions(splits[key[1]], pd.read_parquet(path), source=str(path))
        for key, path in labels.items()
        if key[1] in splits
    }
    return TablePairs(predictions, {d: s.text_id.to_numpy() for d, s in splits.items()}, seed=seed)


def _write_table1(run: _Run, texts_paths, splits_paths) -> pd.DataFrame:
    """Table 1 (dataset statistics); return it. Markdown / LaTeX / HTML read like the paper's Table 1; the CSV
    keeps one number per column."""
    stats = [
        dataset_stats(name, pd.read_parquet(t), pd.read_parquet(s))
        for name, t, s in zip(run.datasets, texts_paths, splits_paths)
    ]
    # what each dataset's texts are, as its builder recorded it (the 10kGNAD csv: no titles)
    t1 = table1(stats, {name: target_text(dataset_provenance(t)) for name, t in zip(run.datasets, texts_paths)})
    paths = run.outputs["table1"]
    write_formats(
        table1_display(t1),
        {k: v for k, v in paths.items() if k != "csv"},
        "Table 1: dataset statistics (split size and classes: min–max over the splits; avg. chars: mean text length).",
        decimals=0,
        footnotes=run.nc_plain,
    )
    if "csv" in paths:
        write_text(to_csv(t1, 0), paths["csv"])
    return t1


def _write_table2(run: _Run, metric: str, summary: pd.DataFrame):
    """Table 2 (or ``table2_{metric}``): one row per model. Return the long statistics table (None without
    statistics), the chance footnotes and ``(table, suffix)`` as shown. ``summary``: the scores' per-cell means."""
    settings, model_names, v = run.settings, run.model_names, metric == "v_measure"
    t2 = table2(summary, model_names, datasets=run.datasets, metric=metric, **settings.table2)
    marks, notes2, long_m = table2_statistics(
        run.scores if v else run.keep,
        t2,
        model_names,
        settings.table2,
        run.spec if run.statistics is not None else None,
        intervals=run.opts["intervals"],
        metric=metric,
        split_kinds=run.kinds,
    )
    marks, trained_notes = mark_trained(t2, marks, model_names, settings.trained_on)
    notes2 = notes2 + trained_notes
    chance_notes, plain2 = [], t2
    if run.chance is not None:
        t2, marks = run.chance.add_row(t2, marks, metric)
        chance_notes = [run.chance.note()]
    _write(
        label_average(t2),
        run.outputs["table2" if v else f"table2_{metric}"],
        f"Table 2: {METRIC_LABELS.get(metric, metric)} x 100, {run.cfg}, mean over splits.",
        mark_best=True,
        footnotes=notes2
        + chance_notes
        + model_notes(settings.model_notes, model_names)
        + (run.nc_plain if v else [])
        + run.status_line(),
        suffix=label_average(marks),
        csv_table=label_average(plain2),
    )
    return long_m, chance_notes, (label_average(t2), label_average(marks))


def _write_table3(run: _Run, metric: str, summary: pd.DataFrame, chance_notes: list):
    """Table 3 (or ``table3_{metric}``): one row per (algorithm, reduction), the mean over the models present.
    Return ``(table, suffix)`` as shown."""
    v = metric == "v_measure"
    present = summary[summary.model.isin(list(run.model_names))] if run.model_names and v else summary
    configurations = [tuple(c) for c in run.settings.configurations]
    t3, n_models = table3(present, configurations, datasets=run.datasets, metric=metric)
    per_cell = present.groupby(["algorithm", "reduction", "dataset"]).model.nunique()
    notes = (
        [f"Some cells average fewer models (as few as {per_cell.min()}): those without a result are left out."]
        if v and len(per_cell) and per_cell.min() < n_models
        else []
    )
    marks3, plain3 = None, t3
    if run.chance is not None:
        t3, marks3 = run.chance.add_row(t3, None, metric)
    _write(
        label_average(t3),
        run.outputs["table3" if v else f"table3_{metric}"],
        f"Table 3: {METRIC_LABELS.get(metric, metric)} x 100 per (algorithm, reduction), mean over the {n_models} "
        "model(s) present.",
        mark_best=True,
        footnotes=notes + chance_notes + (run.nc_plain if v else []) + run.status_line(),
        suffix=label_average(marks3),
        csv_table=label_average(plain3),
    )
    return label_average(t3), label_average(marks3)


def _write_statistics(run: _Run, long: pd.DataFrame) -> None:
    """``table2_statistics`` (Table 2's significance tests) and ``intervals`` (every metric's bootstrap)."""
    from tecb.report import stats as S

    keep_p = {c: 6 for c in long.columns if not str(c).startswith("p_")}  # a p of 1e-16 stays > 0 (issue 53)
    write_text(long.round(keep_p).to_csv(index=False), run.outputs["table2_statistics"]["csv"])
    frames = [
        S.intervals(
            run.keep,
            m,
            split_kinds=run.kinds,
            confidence=run.spec.confidence,
            n_resamples=run.spec.n_resamples,
            seed=run.spec.seed,
        )
        for m in dict.fromkeys(["v_measure", *run.settings.metrics])
    ]
    write_text(pd.concat(frames, ignore_index=True).round(6).to_csv(index=False), run.outputs["intervals"]["csv"])


def _write_vs_paper(run: _Run, t1: pd.DataFrame, reference, reference_table1) -> None:
    """``table{1,2,3}_vs_paper``: this run's Tables 1-3 beside the paper's (this run, paper, delta)."""
    outputs, settings, model_names, nc_notes = run.outputs, run.settings, run.model_names, run.nc_notes
    p1 = (
        paper_table1(reference_table1)
        if reference_table1 and Path(reference_table1).exists()
        else pd.DataFrame(index=t1.index)
    )
    ours1 = t1.select_dtypes("number")
    t1_vs = compare(
        ours1.rename(columns=TABLE1_LABELS),
        p1.rename(columns=TABLE1_LABELS),
        decimals=0,
        column_label="Statistic",
        not_comparable=run.not_comparable,
    )
    write_formats(
        t1_vs,
        outputs["table1_vs_paper"],
        "Table 1 beside the paper's: this run, paper, delta.",
        decimals=0,
        footnotes=nc_notes,
    )
    summary = summarize(run.scores)
    t2 = table2(summary, model_names, datasets=run.datasets, **settings.table2)
    write_formats(
        compare(label_average(t2), paper_table2(reference), not_comparable=run.not_comparable),
        outputs["table2_vs_paper"],
        f"Table 2 ({run.cfg}) beside the paper's per-model results: V-measure x "
        "100, delta = this run - paper. Models are matched by their config `name`.",
        footnotes=nc_notes + run.status_line(),
    )
    present = summary[summary.model.isin(list(model_names))] if model_names else summary
    t3, n_models = table3(present, [tuple(c) for c in settings.configurations], datasets=run.datasets)
    p3, n_paper = paper_table3(reference)
    write_formats(
        compare(label_average(t3), p3, not_comparable=run.not_comparable),
        outputs["table3_vs_paper"],
        f"Table 3 beside the paper's printed Table 3 (mean over its {n_paper} models); this run "
        f"averages {n_models} model(s).",
        footnotes=[
            "The paper prints k-means / umap on BlurbsClusteringP2P as 29.58 (average 28.93); "
            "its per-model results give 32.93 (29.49). Paper rows it does not print are n/a."
        ]
        + nc_notes
        + run.status_line(),
    )


def _per_kind_table(run: _Run, log) -> None:
    """``table2_per_kind``: Table 2's configuration, one column per (dataset, split kind) of the datasets whose
    splits are of different designs, each cell the mean over that kind's splits with its interval."""
    keep, settings, kinds, chance, opts, cfg = run.keep, run.settings, run.kinds, run.chance, run.opts, run.cfg
    spec = run.spec
    paths = run.outputs["table2_per_kind"]
    from tecb.report import stats as S

    long = S.kind_means(
        keep,
        algorithm=settings.table2["algorithm"],
        reduction=settings.table2["reduction"],
        split_kinds=kinds,
        confidence=spec.confidence,
        n_resamples=spec.n_resamples,
        seed=spec.seed,
    )
    pairs = [(d, k) for d in settings.datasets for k in dict.fromkeys((kinds.get(d) or {}).values())]
    columns = [f"{d} {k}" for d, k in pairs]
    names = dict(settings.model_names)
    order = list(names) + sorted(set(long.model) - set(names))
    index = [names.get(m, m) for m in order]
    table = pd.DataFrame(float("nan"), index=pd.Index(index, name="Model"), columns=columns)
    suffix = pd.DataFrame("", index=table.index, columns=columns, dtype=object)
    for r in long.to_dict("records"):
        col, name = f"{r['dataset']} {r['kind']}", names.get(r["model"], r["model"])
        table.at[name, col] = r["mean"] * 100
        if opts["intervals"]:
            suffix.at[name, col] = f" [{r['ci_low'] * 100:.2f}, {r['ci_high'] * 100:.2f}]"
    notes = [
        "Per split kind (coarse: top-level genre splits; fine: second-level genre splits; within-genre: one split "
        "per top-level genre, clustered by its second-level genres): the levels differ by design, so these are "
        f"the means to compare. [low, high]: {spec.confidence:.0%} bootstrap interval over that kind's splits."
    ]
    if not pairs:
        notes = ["No dataset of this run records split kinds (its splits are of one design)."]
    plain = table
    if chance is not None and pairs:
        table, suffix = chance.add_row(table, suffix, "v_measure", [d for d, _ in pairs], [k for _, k in pairs])
        notes.append(chance.note())
    _write(
        table,
        paths,
        f"Table 2 per split kind: V-measure x 100, {cfg}, mean over the splits of each kind.",
        mark_best=True,
        footnotes=notes,
        suffix=suffix,
        csv_table=plain,
    )
    log(to_markdown(table, mark_best=True, suffix=suffix))
