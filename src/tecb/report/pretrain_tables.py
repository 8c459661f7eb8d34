"""Table 5 and Figure 2 of the paper from the adaptive pre-training scores.

Per (model, method, dataset, seed, epoch) the score is the mean V-measure over the dataset's splits
(x 100). Table 5 gives, per (model, method, epoch budget), the mean and SD over seeds and the delta
against the un-adapted model (k-means on its raw embeddings, from the benchmark's own score files);
``best_epochs`` gives the epoch with the highest mean per (model, method, dataset) next to the
score at the fixed budget; Figure 2 draws the mean curve over epochs with a min-max band over seeds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tecb.io import write_table
from tecb.report.contrasts import TEST_NOTE, skipped
from tecb.report.contrasts import table as contrasts_table
from tecb.report.render import to_markdown, write_formats
from tecb.report.stats import MIN_SPLIT_TEXTS
from tecb.report.tables import dataset_order, read_keyed


def collect(paths, keys) -> pd.DataFrame:
    """Concatenate per-seed score files (one row per epoch and split); ``keys`` gives each file's
    ``(model, method, dataset, seed)`` in the order of ``paths`` (the rule names them; no path parsing)."""
    keys = [(model, method, dataset, int(seed)) for model, method, dataset, seed in keys]
    frames = read_keyed(paths, keys, ("model", "method", "dataset", "seed"), required=("epoch", "split", "v_measure"))
    return pd.concat(frames, ignore_index=True)


def training_note(long: pd.DataFrame) -> str:
    """What each job trained: its optimizer steps (at its last scored epoch) per method and dataset, and the
    datasets whose jobs trained on unlabelled texts of their source (``unlabelled_texts``) instead of their own."""
    last = long[long.epoch == long.groupby(["model", "method", "dataset", "seed"]).epoch.transform("max")]
    steps = [
        f"{method} on {dataset} {'/'.join(str(int(n)) for n in sorted(set(g.optimizer_steps)))}"
        for (method, dataset), g in last.groupby(["method", "dataset"], sort=False)
    ]
    note = "Optimizer steps per job: " + "; ".join(steps) + "."
    if "unlabelled_texts" in last:
        for dataset, g in last[last.unlabelled_texts.notna()].groupby("dataset", sort=False):
            n = "/".join(str(int(v)) for v in sorted(set(g.unlabelled_texts)))
            note += (
                f" {dataset}: every job trained on {n} texts of its source's unlabelled books (pretrain.unlabelled),"
                " never on the evaluated texts."
            )
    return note


def noise_floor_note(long: pd.DataFrame, *, alpha: float, power: float = 0.8) -> str:
    """Table 5's noise floor: the smallest Δ its training seeds can detect per dataset, from each (model, method)
    arm's per-seed mean over splits at the job's last scored epoch (:func:`tecb.report.adapt_tables.noise_floor_text`)."""
    from tecb.report.adapt_tables import noise_floor_text

    seeds = per_seed(long)
    seeds = seeds[seeds.epoch == seeds.groupby(["model", "method", "dataset", "seed"]).epoch.transform("max")]
    rows = [
        {"arm": (r.model, r.method), "dataset": r.dataset, "seed": r.seed, "score": r.score} for r in seeds.itertuples()
    ]
    return noise_floor_text(rows, alpha=alpha, power=power)


def per_seed(long: pd.DataFrame) -> pd.DataFrame:
    """Mean V-measure x 100 over splits per (model, method, dataset, seed, epoch)."""
    keys = ["model", "method", "dataset", "seed", "epoch"]
    return long.groupby(keys, as_index=False)["v_measure"].mean().assign(score=lambda d: d.v_measure * 100)


def baselines(paths: dict) -> dict:
    """``{(model, dataset): score}`` from the un-adapted model's k-means/raw score files (mean over splits x 100)."""
    return {key: float(pd.read_parquet(p)["v_measure"].mean() * 100) for key, p in paths.items()}


def baseline_splits(paths: dict) -> dict:
    """``{(model, dataset): Series split -> V-measure}`` of the un-adapted model's k-means/raw score files."""
    return {key: pd.read_parquet(p).set_index("split")["v_measure"].astype(float) for key, p in paths.items()}


def read_predictions(labels: Mapping, baselines: Mapping, splits: Mapping) -> dict:
    """The saved predictions Table 5 and its contrasts test with: ``{"jobs": (model, method, dataset, seed,
    epoch) -> ..., "base": (model, dataset) -> ...}``, each split id -> (text ids, true labels, clusters)
    (:func:`tecb.report.bootstrap.split_predictions`), from each job's labels file (``labels``: (model, method,
    dataset, seed) -> path; ``epoch``, ``split``, ``text_id``, ``cluster``[, ``state``]), the un-adapted model's
    cluster labels files (``baselines``: (model, dataset) -> path) and the datasets' splits files (``splits``:
    dataset -> path)."""
    from tecb.report.bootstrap import split_predictions

    gold = {d: pd.read_parquet(p, columns=["split", "text_id", "label"]) for d, p in splits.items()}
    jobs = {}
    for (model, method, dataset, seed), path in labels.items():
        df = pd.read_parquet(path)
        if "epoch" not in df:
            raise ValueError(f"{path}: labels file lacks column 'epoch'")
        for epoch, part in df.groupby("epoch", sort=True):
            jobs[(model, method, dataset, int(seed), int(epoch))] = split_predictions(
                gold[dataset], part.drop(columns=["epoch"]), source=f"{path} (epoch {int(epoch)})"
            )
    base = {
        (model, dataset): split_predictions(gold[dataset], pd.read_parquet(path), source=str(path))
        for (model, dataset), path in baselines.items()
        if dataset in gold
    }
    return {"jobs": jobs, "base": base}


def _arm_predictions(predictions: Mapping | None, key: tuple, seeds, epoch: int) -> list | None:
    """The saved predictions of an arm (``key``: model, method, dataset) at ``epoch``, per seed, or None."""
    if not predictions:
        return None
    found = [predictions["jobs"].get((*key, int(s), int(epoch))) for s in seeds]
    return None if any(f is None for f in found) else found


def delta_statistics(
    long: pd.DataFrame, base: dict, table_epochs: dict, statistics, split_kinds=None, predictions: Mapping | None = None
) -> pd.DataFrame:
    """The seed level in Table 5's Δ: per (model, method, epoch of ``table_epochs``, dataset) the mean over seeds
    and splits of the pre-trained minus the un-adapted score per split (``base``: :func:`baseline_splits`), its
    interval and two-sided p: the paired text-level bootstrap where ``predictions`` (:func:`read_predictions`)
    holds every seed's and the base's (:func:`tecb.report.contrasts.compare`, stratified by split kind), else from
    the same resamples of splits and seeds (:func:`tecb.report.stats.seeds_mean_test`, with the datasets' split
    kinds and overlap); ``test`` says which. p Holm-adjusted over the table's cells. V-measure x 100."""
    from tecb.report import stats
    from tecb.report.contrasts import ANALYTIC, compare, paired_predictions

    rows = []
    for (model, method, dataset, epoch), part in long.groupby(["model", "method", "dataset", "epoch"], sort=False):
        if epoch not in table_epochs.get(method, []) or (model, dataset) not in base:
            continue
        matrix = part.pivot_table(index="seed", columns="split", values="v_measure", aggfunc="mean")
        sizes = part.groupby("split").n_texts.max().astype(float) if "n_texts" in part else pd.Series(dtype=float)
        splits = [sp for sp in matrix.columns if sp in base[(model, dataset)].index]
        splits = [sp for sp, k in zip(splits, stats.usable_splits(sizes.reindex(splits).to_numpy(float))) if k]
        diffs = matrix[splits].to_numpy(float) - base[(model, dataset)].loc[splits].to_numpy(float)
        kinds = (split_kinds or {}).get(dataset)
        strata = [kinds.get(int(sp)) for sp in splits] if kinds else None
        arm = _arm_predictions(predictions, (model, method, dataset), matrix.index, epoch)
        base_saved = (predictions or {}).get("base", {}).get((model, dataset))
        saved = paired_predictions(arm, [base_saved] if base_saved else None, splits)
        if saved is not None:
            right = base[(model, dataset)].loc[splits].to_numpy(float)[None, :]
            found = compare(
                matrix[splits].to_numpy(float),
                right,
                statistics=statistics,
                design=dataset,
                strata=strata,
                predictions=saved,
            )
        else:
            result = stats.seeds_mean_test(
                diffs,
                strata=strata,
                design_effect=statistics.design_effect(dataset),
                confidence=statistics.confidence,
                n_resamples=statistics.n_resamples,
                seed=statistics.seed,
            )
            found = {"delta": result.mean * 100, "ci_low": result.ci_low * 100, "ci_high": result.ci_high * 100}
            found |= {"p": result.p_value, "detectable": result.detectable * 100, "test": ANALYTIC}
        rows.append(
            {"model": model, "method": method, "epoch": int(epoch), "dataset": dataset, "seeds": len(matrix)}
            | {"splits": len(splits), "texts": float(sizes.reindex(splits).sum()) if len(sizes) else np.nan}
            | found
        )
    columns = ["model", "method", "epoch", "dataset", "seeds", "splits", "texts", "delta", "ci_low", "ci_high"]
    out = pd.DataFrame(rows, columns=columns + ["p", "detectable", "test"])
    out["p_holm"] = stats.holm(out.p.to_numpy(float))
    return out


def delta_marks(t5: pd.DataFrame, deltas: pd.DataFrame, statistics, model_names: dict | None = None) -> pd.DataFrame:
    """Suffixes for Table 5's delta cells: ``*`` where the Holm-adjusted p is below ``alpha``, then the interval
    and the cell's detectable Δ."""
    from tecb.report import stats

    model_names = model_names or {}
    suffix = pd.DataFrame("", index=t5.index, columns=t5.columns, dtype=object)
    for r in deltas.itertuples():
        row, col = f"{model_names.get(r.model, r.model)} {r.method.upper()} {r.epoch}", f"{r.dataset}_delta"
        if row in suffix.index and col in suffix.columns:
            star = "*" if r.p_holm < statistics.alpha else ""
            low, high = stats.format_bound(r.ci_low, signed=True), stats.format_bound(r.ci_high, signed=True)
            suffix.at[row, col] = f"{star} [{low}, {high}] (detectable {r.detectable:.2f})"
    return suffix


def summary(seeds: pd.DataFrame, base: dict) -> pd.DataFrame:
    """Mean, SD (over seeds, ddof=1; 0 for one seed), min, max and delta per (model, method, dataset, epoch)."""
    g = seeds.groupby(["model", "method", "dataset", "epoch"])["score"]
    out = g.agg(
        avg="mean", sd=lambda s: float(s.std(ddof=1)) if len(s) > 1 else 0.0, lo="min", hi="max", n_seeds="count"
    ).reset_index()
    out["baseline"] = [base.get((m, d), np.nan) for m, d in zip(out.model, out.dataset)]
    out["delta"] = out.avg - out.baseline
    return out


def table5(summ: pd.DataFrame, table_epochs: dict, model_names: dict | None = None) -> pd.DataFrame:
    """The paper's layout: one row per (model, method, epochs); per dataset SD, avg, delta; then avg, avg_delta."""
    model_names = model_names or {}
    datasets = dataset_order(summ.dataset.unique())
    rows, index = [], []
    for model in summ.model.unique():
        for method in summ.method.unique():
            for epoch in table_epochs.get(method, []):
                part = summ[(summ.model == model) & (summ.method == method) & (summ.epoch == epoch)]
                if part.empty:
                    continue
                row = {}
                for d in datasets:
                    cell = part[part.dataset == d]
                    one = len(cell) and int(cell.n_seeds.iloc[0]) == 1
                    row[f"{d}_sd"] = "1 seed" if one else float(cell.sd.iloc[0]) if len(cell) else np.nan
                    row[f"{d}_avg"] = float(cell.avg.iloc[0]) if len(cell) else np.nan
                    row[f"{d}_delta"] = float(cell.delta.iloc[0]) if len(cell) else np.nan
                row["avg"] = float(part.avg.mean())
                row["avg_delta"] = float(part.delta.mean())
                rows.append(row)
                index.append((model_names.get(model, model), method.upper(), int(epoch)))
    df = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["model", "method", "epochs"]))
    df.index = [f"{m} {meth} {e}" for m, meth, e in df.index]
    df.index.name = "model method epochs"
    return df


def best_epochs(summ: pd.DataFrame, budgets: dict) -> pd.DataFrame:
    """Per (model, method, dataset): the score at the fixed epoch budget and at the epoch with the best mean."""
    rows = []
    for (model, method, dataset), part in summ.groupby(["model", "method", "dataset"], sort=False):
        best = part.loc[part.avg.idxmax()]
        fixed = part[part.epoch == budgets.get(method)]
        rows.append(
            {
                "model": model,
                "method": method,
                "dataset": dataset,
                "budget_epoch": budgets.get(method),
                "budget_avg": float(fixed.avg.iloc[0]) if len(fixed) else np.nan,
                "budget_delta": float(fixed.delta.iloc[0]) if len(fixed) else np.nan,
                "best_epoch": int(best.epoch),
                "best_avg": float(best.avg),
                "best_sd": float(best.sd),
                "best_delta": float(best.delta),
                "baseline": float(best.baseline),
            }
        )
    df = pd.DataFrame(rows)
    df.index = [f"{r.model} {r.method} {r.dataset}" for r in df.itertuples()]
    df.index.name = "model method dataset"
    return df.drop(columns=["model", "method", "dataset"])


def versus_paper(
    summ: pd.DataFrame,
    reference_path,
    table_epochs: dict,
    model_names: dict | None = None,
    not_comparable: dict | None = None,
) -> pd.DataFrame:
    """Our mean next to the published Table 5 cell and the difference, for every cell both have; a dataset named
    in ``not_comparable`` with a reason (its provenance, :func:`tecb.report.tables.comparability`) gets no difference:
    the cell says "not comparable (...)"."""
    from tecb.report.paper import NOT_COMPARABLE, short_reason

    model_names = model_names or {}
    not_comparable = not_comparable or {}
    ref = pd.read_csv(reference_path)
    rows = []
    for r in summ.itertuples():
        if r.epoch not in table_epochs.get(r.method, []):
            continue
        name = model_names.get(r.model, r.model)
        hit = ref[(ref.model == name) & (ref.method == r.method.upper()) & (ref.epochs == r.epoch)]
        col = f"{r.dataset}_avg"
        paper = float(hit[col].iloc[0]) if len(hit) and col in hit and pd.notna(hit[col].iloc[0]) else np.nan
        reason = not_comparable.get(r.dataset)
        delta = f"{NOT_COMPARABLE} ({short_reason(reason)})" if reason and pd.notna(paper) else r.avg - paper
        rows.append(
            {
                "cell": f"{name} {r.method.upper()} {r.epoch} {r.dataset}",
                "ours": r.avg,
                "paper": paper,
                "ours_minus_paper": delta,
            }
        )
    return pd.DataFrame(rows).set_index("cell")


def figure2(summ: pd.DataFrame, out_path, model_names: dict | None = None) -> None:
    """Mean curve over epochs with a min-max band over seeds; one panel per dataset; baselines dashed.

    Drawn and saved as every figure is (:func:`tecb.report.figures.new_figure`, :func:`~tecb.report.figures.save`:
    no pyplot, byte-stable files); the legend sits below the panels and the saved image is cropped around
    everything drawn, legend included. ``out_path``: a ``.png`` or ``.svg``."""
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    from tecb.report.figures import legend_below_panels, new_figure, save

    model_names = model_names or {}
    datasets = dataset_order(summ.dataset.unique())
    ncols = min(3, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig = new_figure((4.2 * ncols, 3.2 * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    curves = list(summ.groupby(["model", "method"], sort=False).groups)
    for ax, dataset in zip(axes.flat, datasets):
        for i, (model, method) in enumerate(curves):
            part = summ[(summ.model == model) & (summ.method == method) & (summ.dataset == dataset)].sort_values(
                "epoch"
            )
            if part.empty:
                continue
            color = colors[i % len(colors)]
            label = f"{model_names.get(model, model)} {method.upper()}"
            ax.plot(part.epoch, part.avg, marker="o", ms=3, color=color, label=label)
            ax.fill_between(part.epoch, part.lo, part.hi, color=color, alpha=0.2, linewidth=0)
        for model in summ.model.unique():
            base = summ[(summ.model == model) & (summ.dataset == dataset)].baseline
            if len(base) and pd.notna(base.iloc[0]):
                ax.axhline(base.iloc[0], ls="--", lw=1, color="grey")
                ax.annotate(model_names.get(model, model), (ax.get_xlim()[0], base.iloc[0]), fontsize=6, color="grey")
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("V-measure x 100")
    legend_below_panels(fig, axes, len(datasets), ncols)
    save(fig, out_path)


@dataclass(frozen=True, kw_only=True)
class ReportInputs:
    """The files Table 5 is made from: one ``scores`` file per pre-training job, ``keys`` naming each job
    ``(model, method, dataset, seed)`` in their order, ``baselines`` ((model, dataset) -> the un-adapted model's
    k-means/raw score file) and ``reference`` (the paper's Table 5 CSV; None or a missing file: no comparison)."""

    keys: Sequence[Sequence]
    scores: Sequence
    baselines: Mapping
    reference: str | Path | None
    #: the declared contrasts (the config's ``tables.contrasts``: ``a``, ``b``), computed among the methods
    contrasts: Sequence[Mapping] = ()
    #: the saved predictions (``tables.statistics.labels``; empty: not given, the analytic test): (model, method,
    #: dataset, seed) -> the job's labels file, (model, dataset) -> the un-adapted model's k-means/raw labels
    #: file, and dataset -> its splits file (:func:`read_predictions`)
    labels: Mapping = field(default_factory=dict)
    baseline_labels: Mapping = field(default_factory=dict)
    splits: Mapping = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Table5Rows:
    """The rows Table 5 shows and how it names them: ``epochs`` (method -> the epochs Table 5 shows, also those
    of its delta cells and of the comparison with the paper) and ``model_names`` (model -> its printed name)."""

    epochs: dict
    model_names: dict | None = None


def render(
    inputs: ReportInputs,
    outputs: dict,
    *,
    rows: Table5Rows,
    budgets: dict,
    not_comparable: dict | None = None,
    statistics=None,
    split_kinds: dict | None = None,
    log=print,
) -> None:
    """Workflow entry point; writes exactly the files of ``outputs`` (the rule declares them):
    ``scores`` (Parquet), ``figure2`` (PNG) and, per table (``table5``, ``best_epochs``, ``table5_vs_paper``),
    a mapping format -> path (``md``, ``csv``, ``tex``, ``html``). ``rows``: the epochs Table 5 shows per method and
    the models' names (:class:`Table5Rows`); ``budgets``: method -> its fixed epoch budget (:func:`best_epochs`).
    ``statistics`` (a :class:`tecb.report.stats.Statistics`, with the datasets' split overlaps; None: none): Table
    5's delta cells get the interval and mark of :func:`delta_statistics`, and ``contrasts`` in ``outputs`` (format
    -> path) gets the contrasts of ``inputs.contrasts`` among the methods (:func:`contrasts`)."""
    import pyarrow as pa

    from tecb.report.paper import comparability_line

    long = collect(inputs.scores, inputs.keys)
    write_table(pa.Table.from_pandas(long, preserve_index=False), outputs["scores"])
    summ = summary(per_seed(long), baselines(inputs.baselines))
    t5 = table5(summ, rows.epochs, rows.model_names)
    status = comparability_line(not_comparable, list(dict.fromkeys(summ.dataset))) if not_comparable is not None else ""
    suffix, notes = None, ([status] if status else []) + ([training_note(long)] if "optimizer_steps" in long else [])
    saved = None
    if statistics is not None and inputs.labels:
        saved = read_predictions(inputs.labels, inputs.baseline_labels, inputs.splits)
    if statistics is not None:
        base = baseline_splits(inputs.baselines)
        deltas = delta_statistics(long, base, rows.epochs, statistics, split_kinds, predictions=saved)
        suffix = delta_marks(t5, deltas, statistics, rows.model_names)
        notes += _delta_notes(long, deltas, statistics)
    write_formats(
        t5,
        outputs["table5"],
        "Table 5: V-measure x 100 after adaptive pre-training, mean and SD "
        "over seeds, delta vs. the un-adapted model (k-means, raw embeddings).",
        footnotes=notes,
        suffix=suffix,
    )
    write_formats(
        best_epochs(summ, budgets),
        outputs["best_epochs"],
        "Score at the fixed epoch budget and at the best epoch (by mean over seeds).",
    )
    _write_versus_paper(summ, inputs.reference, rows, not_comparable, (outputs["table5_vs_paper"], status))
    figure2(summ, outputs["figure2"], rows.model_names)
    log(to_markdown(t5))
    if "contrasts" in outputs:
        _write_contrasts(long, inputs, outputs["contrasts"], budgets, statistics, (split_kinds, saved))


def _delta_notes(long: pd.DataFrame, deltas: pd.DataFrame, statistics) -> list[str]:
    """Table 5's notes on its delta cells (their interval, test and the splits they rest on) and its noise floor."""
    rests = "; ".join(
        dict.fromkeys(f"{r.dataset} {r.splits} splits, {r.texts:,.0f} texts" for r in deltas.itertuples())
    )
    used = sorted(set(deltas.test)) if "test" in deltas else []
    notes = [
        f"delta [low, high]: {statistics.confidence:.0%} t interval of the mean over seeds and splits of the "
        "pre-trained minus the un-adapted score per split (tests used: "
        + (", ".join(used) or "none")
        + f"; {TEST_NOTE} Stratified by split kind where the dataset records kinds, as Tables 2 and 6); *: its two-sided t test is significant after Holm over the "
        f"table's cells (α = {statistics.alpha:g}); (detectable d): the smallest true delta that test finds with "
        f"80 % power. Splits of fewer than {MIN_SPLIT_TEXTS} texts are left out; each delta rests on: "
        f"{rests or 'no split'}. SD: over seeds; 1 seed: not estimated."
    ]
    return notes + [n for n in [noise_floor_note(long, alpha=statistics.alpha)] if n]


def _write_versus_paper(summ: pd.DataFrame, reference_path, rows: Table5Rows, not_comparable, out: tuple) -> None:
    """Write ``table5_vs_paper`` (``out``: its format -> path and the comparability line): our means beside the
    published ones (:func:`versus_paper`), empty without a reference file."""
    paths, status = out
    if reference_path and Path(reference_path).exists():
        vs = versus_paper(summ, reference_path, rows.epochs, rows.model_names, not_comparable)
    else:
        vs = pd.DataFrame(columns=["ours", "paper", "ours_minus_paper"], index=pd.Index([], name="cell"))
    reasons = [f"{d}: {r}" for d, r in (not_comparable or {}).items() if r and d in set(summ.dataset)]
    caption = "Our Table 5 means next to the published ones." if len(vs) else "No reference table given."
    if len(vs) and reasons:
        caption += " Not comparable with the paper's datasets (no difference shown): " + "; ".join(reasons) + "."
    write_formats(vs, paths, caption, footnotes=[status] if status else [])


def _write_contrasts(long: pd.DataFrame, inputs: ReportInputs, paths: dict, budgets, statistics, known) -> None:
    """Write the contrasts table (``paths``: format -> path) of ``inputs.contrasts`` (:func:`contrasts`), or a
    table saying none were computed where ``statistics`` is off; ``known``: the split kinds and the saved
    predictions (:func:`read_predictions`, or None)."""
    split_kinds, saved = known
    if statistics is None:
        off = pd.DataFrame(columns=["contrast"], index=pd.Index([], name="contrast · model · a · dataset"))
        write_formats(off, paths, "No contrasts: tables.statistics is off.")
        return
    found, skipped = contrasts(
        long,
        baseline_splits(inputs.baselines),
        declared=inputs.contrasts,
        budgets=budgets,
        statistics=statistics,
        split_kinds=split_kinds,
        predictions=saved,
    )
    write_formats(
        found,
        paths,
        "Contrasts declared in tables.contrasts among the pre-training methods, each at its fixed epoch budget: "
        "V-measure x 100 of arm a minus arm b on the same splits (k-means on raw embeddings).",
        footnotes=[
            f"delta [ci_low, ci_high]: its {statistics.confidence:.0%} t interval and p its two-sided t test "
            f"(stratified by split kind where the dataset records kinds, each arm's seeds' variance, seeds: a / b; "
            f"{TEST_NOTE}), so p < {1 - statistics.confidence:g} exactly when the interval excludes 0; p_holm: Holm over every "
            f"row; *: p_holm < {statistics.alpha:g}; detectable: the smallest true delta the row's test finds "
            f"with 80 % power; splits, texts: what each row rests on (splits of fewer than {MIN_SPLIT_TEXTS} "
            "texts left out)."
        ]
        + skipped,
    )


def contrasts(
    long: pd.DataFrame,
    base: dict,
    *,
    declared: Sequence[Mapping],
    budgets: dict,
    statistics,
    split_kinds: dict | None = None,
    predictions: Mapping | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The declared contrasts (``tables.contrasts``: ``a``, ``b``) among the pre-training methods, each method at
    its fixed epoch budget (``budgets``): per (model, dataset) a − b (``base``: the un-adapted model,
    :func:`baseline_splits`; ``*``: every method) on the shared splits, with the interval and two-sided p of
    :func:`tecb.report.contrasts.compare` (the paired text-level bootstrap, stratified by split kind, where
    ``predictions``, :func:`read_predictions`, holds both arms' for every seed; else the analytic
    :func:`tecb.report.stats.contrast_test` with both arms' seeds and the split overlap; ``test`` says which)
    and Holm over the rows. Arms this run lacks: a note each. V-measure x 100."""
    at_budget = long[long.epoch == long.method.map(budgets)]
    arms = {
        (model, method, dataset): part.pivot_table(index="seed", columns="split", values="v_measure", aggfunc="mean")
        for (model, method, dataset), part in at_budget.groupby(["model", "method", "dataset"], sort=False)
    }
    rows, notes = [], []
    for item in declared:
        a, b = item["a"], item["b"]
        pairs = [
            (key, (key[0], b, key[2]) if b != "base" else None)
            for key in arms
            if (a == "*" or key[1] == a) and (b == "base" or ((key[0], b, key[2]) in arms and b != key[1]))
        ]
        pairs = [(ka, kb) for ka, kb in pairs if kb is not None or ka[:1] + ka[2:] in base]
        if not pairs:
            notes.append(skipped(f"{a} − {b}"))
            continue
        for ka, kb in pairs:
            right = base[(ka[0], ka[2])].to_frame().T if kb is None else arms[kb]
            saved = (
                _arm_predictions(predictions, ka, arms[ka].index, budgets.get(ka[1])),
                [(predictions or {}).get("base", {}).get((ka[0], ka[2]))]
                if kb is None
                else _arm_predictions(predictions, kb, arms[kb].index, budgets.get(kb[1])),
            )
            rows.append(
                _contrast_row(
                    f"{a} − {b}", at_budget, (ka, arms[ka]), (kb, right), budgets, statistics, split_kinds, saved
                )
            )
    columns = ["contrast", "model", "a", "b", "dataset", "splits", "texts", "seeds"]
    return contrasts_table(
        rows, columns=columns, key=["contrast", "model", "a", "dataset"], alpha=statistics.alpha
    ), notes


def _contrast_row(
    name: str, at_budget, arm_a: tuple, arm_b: tuple, budgets, statistics, split_kinds, saved=(None, None)
) -> dict:
    """One row of the contrasts: arm ``a`` (key, seeds x splits) minus arm ``b`` (key or None for the base, its
    seeds x splits) on their shared usable splits, before Holm and printing; ``saved``: each arm's predictions
    per seed (:func:`_arm_predictions`; None: not saved, the analytic test)."""
    from tecb.report import stats
    from tecb.report.contrasts import compare, paired_predictions

    (ka, left), (kb, right) = arm_a, arm_b
    has_sizes = "n_texts" in at_budget
    part = at_budget[at_budget.dataset == ka[2]]
    sizes = part.groupby("split").n_texts.max().astype(float) if has_sizes else pd.Series(dtype=float)
    shared = [s for s in left.columns if s in right.columns]
    shared = [s for s, k in zip(shared, stats.usable_splits(sizes.reindex(shared).to_numpy(float))) if k]
    kinds = (split_kinds or {}).get(ka[2])
    result = compare(
        left[shared].to_numpy(float),
        right[shared].to_numpy(float),
        statistics=statistics,
        design=ka[2],
        strata=[kinds.get(int(s)) for s in shared] if kinds else None,
        predictions=paired_predictions(saved[0], saved[1], shared),
    )
    return (
        {"contrast": name, "model": ka[0], "a": f"{ka[1]} {budgets.get(ka[1])}"}
        | {"b": "base" if kb is None else f"{kb[1]} {budgets.get(kb[1])}", "dataset": ka[2]}
        | {"splits": len(shared), "texts": float(sizes.reindex(shared).sum()) if has_sizes else np.nan}
        | {"seeds": f"{len(left)} / {len(right)}" if kb else str(len(left))}
        | result
    )
