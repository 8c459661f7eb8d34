"""Table 6 and the training curves of the training methods (simcse, clusterns, cob, triplet, argue).

Each training job (:func:`tecb.adapt.jobs.run`) scores the base model (step 0) and the adapted model (its last
step) on the same evaluation splits, so every row of Table 6 is a paired comparison split by split:

- ``base``, ``adapted``: mean V-measure x 100 over the splits (the adapted per-split score is the mean over seeds),
  ``base`` with the project's bootstrap interval over splits (:func:`tecb.report.stats.bootstrap_interval`),
  ``adapted`` and ``Δ`` with one over training seeds and splits (the seeds' variance is in the interval);
- ``Δ``: adapted - base with ``*`` where the two-sided paired test is significant after Holm's adjustment over
  all rows of the table (:func:`tecb.report.stats.holm`); ``p`` is that adjusted p-value. The controls' rows
  (the ``random_head`` control, and every row of the ``oracle`` protocol: the positive control, trained on the
  evaluated labels) are adjusted among themselves, apart from the methods'
  (:func:`tecb.report.contrasts.holm_by_family`). The default test (``mean``) and the intervals of ``adapted``
  and ``Δ`` come from the same resamples of training seeds and splits (:func:`tecb.report.stats.seeds_mean_test`),
  so a ``*`` never sits on an interval that contains 0; the other
  tests are intersection-union tests over the seeds (:func:`tecb.report.stats.seeds_paired_pvalue`);
- ``SD seeds``: of the seeds' mean scores, or "1 seed" (no seed variance estimated);
- the training cost that is the same on every rerun: optimizer steps, device, precision. The seconds are in a
  separate file (:func:`costs`), never in Table 6.

The figure draws the mean V-measure over training steps per (method, protocol), one panel per dataset.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tecb.adapt.frozen import ARMS as FROZEN_ARMS
from tecb.adapt.protocol import POSITIVE_CONTROLS
from tecb.adapt.training import CONTROLS
from tecb.io import atomic_path, write_table
from tecb.report import stats
from tecb.report.contrasts import ANALYTIC, TEST_NOTE, compare, holm_by_family, paired_predictions, skipped
from tecb.report.contrasts import table as contrasts_table
from tecb.report.render import header_label, to_markdown, write_formats
from tecb.report.tables import dataset_order

METHOD_NAMES = {
    "simcse": "SimCSE",
    "clusterns": "ClusterNS",
    "cob": "COB",
    "triplet": "Triplet",
    "random_head": "random head",  # a control (CONTROLS): the head COB and triplet start from, no training
    "argue": "argue",
    # the arms on frozen vectors (tecb.adapt.frozen_jobs): "title→blurb (ridge)", ...
    **{arm: name.split(" (POSITIVE")[0] for arm, (_, name) in FROZEN_ARMS.items()},
}
KEYS = ["model", "method", "variant", "dataset"]
POSITIVE_CONTROL_RAN = "POSITIVE CONTROL: trained on the evaluated labels"


def is_control(key) -> bool:
    """Whether a job (``key``: model, method, variant, ...) is a control, not a result: the ``random_head`` control
    (:data:`tecb.adapt.training.CONTROLS`) or any job of a positive-control protocol (``oracle``:
    :data:`tecb.adapt.protocol.POSITIVE_CONTROLS`)."""
    return key[1] in CONTROLS or key[2] in POSITIVE_CONTROLS


def collect(paths, keys) -> tuple[pd.DataFrame, dict]:
    """The per-(step, split) rows of every job, with ``model, method, variant, dataset, seed`` in front; and each
    job's metadata (protocol record, training summary) by key. ``keys`` names each file's job in order."""
    import pyarrow.parquet as pq

    paths, keys = list(map(str, paths)), [tuple(k) for k in keys]
    if len(paths) != len(keys):
        raise ValueError(f"{len(paths)} score files but {len(keys)} keys")
    frames, meta = [], {}
    for path, (model, method, variant, dataset, seed) in zip(paths, keys):
        table = pq.read_table(path)
        meta[(model, method, variant, dataset, int(seed))] = json.loads((table.schema.metadata or {})[b"tecb"])
        df = table.to_pandas()
        for i, (name, value) in enumerate(
            [("model", model), ("method", method), ("variant", variant), ("dataset", dataset), ("seed", int(seed))]
        ):
            df.insert(i, name, value)
        frames.append(df)
    return pd.concat(frames, ignore_index=True), meta


def read_predictions(paths, keys) -> dict:
    """(model, method, variant, dataset, seed) -> ``{"base": ..., "final": ...}``, each split id -> (text ids, true
    labels, predicted clusters) (:func:`tecb.report.bootstrap.split_predictions`) of step 0 and of the last step,
    from each job's labels file (``keys``: each file's job in order; :func:`tecb.adapt.jobs.labels_table`); a
    job that was skipped (no rows) is left out."""
    from tecb.report.bootstrap import split_predictions

    paths, keys = list(map(str, paths)), [tuple(k) for k in keys]
    if len(paths) != len(keys):
        raise ValueError(f"{len(paths)} labels files but {len(keys)} keys")
    out = {}
    for path, key in zip(paths, keys):
        df = pd.read_parquet(path)
        if df.empty:
            continue
        missing = {"step", "split", "text_id", "label", "cluster"} - set(df.columns)
        if missing:
            raise ValueError(f"{path}: labels file lacks column(s) {sorted(missing)}")
        first = df[(df.step == 0) & (df.state == 0)] if "state" in df else df[df.step == 0]
        gold = first[["split", "text_id", "label"]]
        steps = {"base": 0, "final": int(df.step.max())}
        out[(*key[:4], int(key[4]))] = {
            name: split_predictions(gold, df[df.step == step].drop(columns=["step", "label"]), source=path)
            for name, step in steps.items()
        }
    return out


def _share(part, whole) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "n/a"


CHANCE_NOTE = (
    "Random partition (chance): the expected V-measure of a uniformly random partition of each split into as many "
    "clusters as it has labels, over all of the dataset's splits, with its interval over the draws (the floor of "
    "the transductive and lodo rows; disjoint rows evaluate restricted splits with their own floor). "
)


def _selection(info: dict) -> list[str]:
    """COB's and triplet's model selection, as recorded by the training loop: the epoch kept of those run, and the
    validation instances it was chosen on."""
    if "selected_epoch" not in info:
        return []
    scores = info.get("validation") or []
    shown = "/".join(f"{100 * v:.1f}" for v in scores)
    return [
        f"epoch {info['selected_epoch']} of {max(len(scores) - 1, 0)} kept on {info.get('validation_instances', '?')} "
        f"validation instances (V x 100 by epoch, 0 = base: {shown})"
    ]


def _step0(phases: dict) -> list[str]:
    """Each phase's loss at step 0 beside its loss at chance (as the training loop recorded them), and ``~NO SIGNAL``
    where it was under 1 % of chance: the method had ~nothing to learn on these data."""
    out = []
    for name, info in phases.items():
        if info.get("step0_loss") is None:
            continue
        chance = info.get("chance_loss")
        text = f"{name} step-0 loss {info['step0_loss']:.3g}" + (
            f" (chance {chance:.3g})" if chance is not None else ""
        )
        out.append(text + (" ~NO SIGNAL" if info.get("no_signal") else ""))
    return out


def _views(info: dict) -> str:
    """SimCSE's views: ``dropout views``, or for cropping its ratio and the share of the views a crop shortened
    (a ratio that cuts no text leaves dropout alone)."""
    augmentation = info.get("augmentation", "dropout")
    if augmentation != "cropping" or not info.get("views"):
        return f"{augmentation} views"
    return (
        f"cropping views (ratio {info.get('crop_ratio')}: {_share(info['views_cropped'], info['views'])} of views cut)"
    )


def _auto_settings(info: dict, *, show_fixed_k: bool) -> list[str]:
    """ClusterNS's K (``k 12``; a fixed K only with ``show_fixed_k``) and, where ``auto``, sigma, each with how it
    was resolved from the step-0 batch (``k 12 (auto: best silhouette of the step-0 batch)``)."""
    out = []
    k_auto = info.get("n_clusters_auto")
    if k_auto or show_fixed_k:
        out.append(f"k {info.get('n_clusters')}" + (f" (auto: {k_auto['rule']})" if k_auto else ""))
    sigma_auto = info.get("similarity_threshold_auto")
    if sigma_auto:
        out.append(f"σ {info['similarity_threshold']:.2f} (auto: {sigma_auto['rule']})")
    return out


def _weights(counts: dict | None, method: str) -> list[str]:
    """Which weights trained (``adapt.freeze_word_embeddings``), from the training's parameter counts; nothing for
    a control or a record from before the counts were kept."""
    if not counts or method in CONTROLS:
        return []
    trained, total = counts["trained"] / 1e6, counts["total"] / 1e6
    if counts.get("word_embeddings_frozen"):
        return [f"word embeddings frozen ({trained:.1f} M of {total:.1f} M weights trained)"]
    return [f"all {total:.1f} M weights trained (word embeddings too)"]


def steps_shown(training: dict) -> str:
    """The ``steps`` cell of one job: the optimizer steps behind the model kept, with those run where model
    selection kept an earlier epoch (``58 of 232``)."""
    run, kept = training.get("steps", ""), training.get("steps_kept")
    return str(run) if kept is None or kept == run else f"{kept} of {run}"


def _frozen(arm: str, info: dict) -> str:
    """What an arm on frozen vectors fitted (tecb.adapt.frozen_jobs): on what, and its fit's own record."""
    fitted_on = {
        "unlabelled": "the evaluated texts' vectors, no label",
        "labels": "each split's own labels",
        "half_labels": "the training half of the categories",
        "pairs": "unseen books' (title, blurb) pairs",
    }[FROZEN_ARMS[arm][0]]
    shown = []
    for key in ("components", "components_removed", "n_clusters", "kind", "epochs", "pairs", "items", "alpha"):
        if info.get(key) is not None:
            shown.append(f"{key.replace('_', ' ')} {info[key]}")
    for start, end in (("loss_start", "loss_end"), ("confidence_start", "confidence_end")):
        if info.get(start) is not None:
            shown.append(f"{start.split('_')[0]} {info[start]:.3g} -> {info[end]:.3g}")
    if info.get("per_split"):
        first, last = info["per_split"][0], info["per_split"][-1]
        shown.append(f"{len(info['per_split'])} heads, loss e.g. {first['loss_start']:.3g} -> {last['loss_end']:.3g}")
    return f"frozen vectors, fitted on {fitted_on}" + (f" ({', '.join(shown)})" if shown else "")


def what_ran(method: str, training: dict, warnings=()) -> str:
    """What one job's training really did, from its recorded phases: ClusterNS's clustering start, k (and sigma,
    where resolved ``auto``) and share of batches with hard and false negatives (``NEVER CLUSTERED`` when it
    trained plain SimCSE), COB's instances, the triplets mined, the projection head, argue's phases."""
    phases = training.get("phases", {}) or {}
    parts = []
    if method == "clusterns":
        info = phases.get("clusterns", {})
        if info.get("clustering_started_at") is None:
            parts.append("NEVER CLUSTERED (plain SimCSE)")
            parts += _auto_settings(info, show_fixed_k=False)
        else:
            n = info.get("batches", 0)
            parts.append(
                f"clustering from step {info['clustering_started_at']}, "
                + ", ".join(_auto_settings(info, show_fixed_k=True))
                + f", hard negatives in {_share(info.get('batches_with_hard_negatives', 0), n)} and false negatives "
                f"in {_share(info.get('batches_with_false_negatives', 0), n)} of {n} batches"
            )
    elif method == "simcse":
        parts.append(_views(phases.get("simcse", {})))
    elif method == "cob":
        info = phases.get("cob", {})
        parts.append(f"{info.get('instances', '?')} instances")
        parts += _selection(info)
    elif method == "triplet":
        info = phases.get("triplet", {})
        parts.append(f"{info.get('triplets', '?')} triplets")
        parts += _selection(info)
    elif method == "argue":
        parts.append("phases " + " + ".join(phases) if phases else "no phase")
    elif method in CONTROLS:
        parts.append("CONTROL: no training")
    elif method in FROZEN_ARMS:
        parts.append(_frozen(method, phases.get(method, {})))
    parts += _step0(phases)
    head = next((i.get("projection_head") for i in phases.values() if i.get("projection_head")), None)
    head_lr = (training.get("settings") or {}).get("head_lr")
    if head:
        parts.append(f"head {head}" + (f" at lr {head_lr:g}" if head_lr is not None else ""))
    elif head_lr is not None:
        parts.append(f"heads at lr {head_lr:g}")
    parts += _weights(training.get("parameters"), method)
    if warnings and not any("NEVER" in p for p in parts):
        parts.append("WARNING: " + "; ".join(warnings))
    return ", ".join(parts)


def table6(
    long: pd.DataFrame,
    meta: dict,
    *,
    statistics: stats.Statistics,
    model_names: dict | None = None,
    split_kinds: dict | None = None,
    chance: dict | None = None,
    predictions: Mapping | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, suffix)``: one row per (model, method, protocol, dataset); ``suffix`` holds the intervals and
    significance marks appended to the cells (:func:`tecb.report.tables.write_formats`). ``statistics``: the test,
    its level and the intervals' (:class:`tecb.report.stats.Statistics`). ``split_kinds``
    (dataset -> split -> kind, :func:`tecb.report.tables.split_kinds`): as in Table 2, those datasets' intervals
    resample splits within their kind and their paired tests are stratified by kind (Blurbs' three designs).
    ``chance`` (dataset -> the chance rule's rows, :func:`tecb.scoring.chance.chance_scores`): one row per dataset,
    a random partition's expected V-measure over all its splits in ``base`` with its interval over the draws (the
    floor of the rows that evaluate all splits: transductive and lodo), as Table 2's chance row. ``predictions``
    (:func:`read_predictions`; None: not saved): Δ's interval and test are the paired text-level bootstrap where
    every seed of a job has its saved predictions, else the analytic test (the ``test`` column says which)."""
    model_names = model_names or {}
    rows, marks, pvals, index = [], [], [], []
    order = {m: i for i, m in enumerate(METHOD_NAMES)}
    datasets = {d: i for i, d in enumerate(dataset_order(long.dataset.unique()))}
    jobs = sorted(
        {k[:4] for k in meta}, key=lambda k: (k[0], order.get(k[1], 99), k[1], k[2], datasets.get(k[3], 99), k[3])
    )
    for key in jobs:
        seeds = sorted(s for k, s in ((k[:4], k[4]) for k in meta) if k == key)
        label = f"{model_names.get(key[0], key[0])} · {METHOD_NAMES.get(key[1], key[1])} · {key[2]} · {header_label(key[3])}"
        index.append(label)
        row, mark, p = _table6_row(
            long, meta, key, seeds, statistics=statistics, split_kinds=split_kinds, predictions=predictions
        )
        rows.append(row)
        marks.append(mark)
        pvals.append(p)
    if chance:
        _chance_rows(chance, statistics, (index, rows, marks, pvals))
    controls = [is_control(k) for k in jobs] + [False] * (len(pvals) - len(jobs))  # then the chance rows
    adjusted = holm_by_family(pvals, controls)
    return _table6_frame(rows, marks, index, adjusted, alpha=statistics.alpha)


def _table6_row(
    long: pd.DataFrame, meta: dict, key, seeds, *, statistics, split_kinds, predictions=None
) -> tuple[dict, dict, float]:
    """One job's row of Table 6 (``key``: model, method, variant, dataset; over ``seeds``), its cells' interval
    suffixes and its p before Holm; a skipped job's row says why (no mark, no p)."""
    skipped = [meta[(*key, s)]["protocol"].get("skipped") for s in seeds]
    if any(skipped):
        return {"base": np.nan, "adapted": np.nan, "Δ": np.nan, "p": f"skipped: {skipped[0]}"}, {}, np.nan
    base, finals, per_seed = _arm_scores(long, key, seeds)
    joined = pd.concat([base.rename("b"), per_seed], axis=1, join="inner").dropna()
    sizes = split_sizes(long, key).reindex(joined.index)
    joined = joined[stats.usable_splits(sizes.to_numpy(float))]  # the rule for tiny splits, every row alike
    b = joined.b.to_numpy(float)
    by_seed = joined.drop(columns="b").to_numpy(float).T  # seeds x splits
    a = by_seed.mean(axis=0)
    kinds_of = (split_kinds or {}).get(key[3])
    strata = [kinds_of.get(int(sp)) for sp in joined.index] if kinds_of else None
    training = [meta[(*key, s)].get("training", {}) for s in seeds]
    seed_means = [float(f.v_measure.mean() * 100) for f in finals]
    saved = job_predictions(predictions, key, seeds, joined.index)
    bounds, p, detectable, test = _table6_test(long, key, seeds, joined.index, (b, by_seed, strata), statistics, saved)
    row = {
        "base": b.mean() * 100,
        "adapted": a.mean() * 100,
        "Δ": (a - b).mean() * 100,
        "p": p,
        "SD seeds": f"{np.std(seed_means, ddof=1):.2f}" if len(seed_means) > 1 else "1 seed",
        "detectable": detectable,
        "test": test,
        "seeds": len(seeds),
        "splits": len(joined),
        "texts": int(sizes.reindex(joined.index).sum()) if sizes.notna().any() else np.nan,
        "steps": " / ".join(dict.fromkeys(steps_shown(t) for t in training)),
        "device": training[0].get("device", ""),
        "precision": training[0].get("precision", ""),
        "ran": " / ".join(
            dict.fromkeys(what_ran(key[1], t, meta[(*key, s)].get("warnings", ())) for t, s in zip(training, seeds))
        ),
    }
    if key[2] in POSITIVE_CONTROLS and key[1] not in CONTROLS:
        row["ran"] = ", ".join(x for x in (POSITIVE_CONTROL_RAN, row["ran"]) if x)
    (lo_b, hi_b), (lo_a, hi_a), (lo_d, hi_d) = bounds
    mark = {
        "base": f" [{stats.format_bound(lo_b * 100)}, {stats.format_bound(hi_b * 100)}]",
        "adapted": f" [{stats.format_bound(lo_a * 100)}, {stats.format_bound(hi_a * 100)}]",
        "Δ": f" [{stats.format_bound(lo_d * 100, signed=True)}, {stats.format_bound(hi_d * 100, signed=True)}]",
    }
    return row, mark, p


def job_predictions(predictions: Mapping | None, key, seeds, splits):
    """The :class:`tecb.report.contrasts.Predictions` of one job (``key``: model, method, variant, dataset) on
    ``splits``: its seeds' final predictions against their step 0's (the base); None where some are not saved."""
    if not predictions:
        return None
    jobs = [predictions.get((*key, s)) for s in seeds]
    if any(j is None for j in jobs):
        return None
    return paired_predictions([j["final"] for j in jobs], [j["base"] for j in jobs], splits)


def _table6_test(long, key, seeds, splits, arrays, statistics, saved=None) -> tuple[tuple, float, float, str]:
    """One job's intervals of base, adapted and Δ (fractions), Δ's p, its detectable Δ (x 100; NaN but for
    the ``mean`` test) and the test used: from one t of the splits' and the seeds' variance (``mean``; Δ's by
    the paired text-level bootstrap where ``saved`` holds the job's predictions), else bootstrap intervals and
    an intersection-union test over the seeds. ``arrays``: the base per split, seeds x splits and their kinds."""
    b, by_seed, strata = arrays
    draws = {"n_resamples": statistics.n_resamples, "seed": statistics.seed}
    interval = {"confidence": statistics.confidence, **draws, "strata": strata}
    lo_b, hi_b = stats.bootstrap_interval(b, **interval)
    detectable = np.nan
    if statistics.test == "mean":  # interval and test from one t of the splits' and the seeds' variance
        overlap = statistics.design_effect(key[3])
        noise_b, noise_a = arm_noise(long, key, seeds, splits)
        adapted = stats.seeds_mean_test(by_seed, design_effect=overlap, noise=noise_a, **interval)
        delta = stats.contrast_test(
            by_seed, b[None, :], design_effect=overlap, noise_a=noise_a, noise_b=noise_b, **interval
        )
        (lo_a, hi_a), (lo_d, hi_d), p = (
            (adapted.ci_low, adapted.ci_high),
            (delta.ci_low, delta.ci_high),
            delta.p_value,
        )
        detectable, test = delta.detectable * 100, ANALYTIC
        if saved is not None:  # Δ by the text-level bootstrap over both sides' predictions
            boot = compare(by_seed, b[None, :], statistics=statistics, design=key[3], strata=strata, predictions=saved)
            lo_d, hi_d, p = boot["ci_low"] / 100, boot["ci_high"] / 100, boot["p"]
            detectable, test = boot["detectable"], boot["test"]
    else:
        lo_a, hi_a = stats.seeds_bootstrap_interval(by_seed, **interval)
        lo_d, hi_d = stats.seeds_bootstrap_interval(by_seed - b, **interval)
        p = stats.seeds_paired_pvalue(by_seed - b, test=statistics.test, **draws, strata=strata)
        test = statistics.test
    return ((lo_b, hi_b), (lo_a, hi_a), (lo_d, hi_d)), p, detectable, test


def _chance_rows(chance: dict, statistics, into: tuple[list, list, list, list]) -> None:
    """Append Table 6's chance rows (one per dataset: a random partition's expected V-measure and its interval over
    the draws) to ``into``: its (index, rows, marks, pvals)."""
    from tecb.report.chance import chance_summary
    from tecb.report.tables import CHANCE_ROW

    index, rows, marks, pvals = into
    floor = chance_summary(chance, metric="v_measure", confidence=statistics.confidence).set_index("column")
    for dataset in dataset_order([d for d in chance if d in floor.index]):
        cell = floor.loc[dataset]
        index.append(f"{CHANCE_ROW} · all splits · {header_label(dataset)}")
        rows.append({"base": cell["mean"] * 100, "adapted": np.nan, "Δ": np.nan, "p": ""})
        marks.append({"base": f" [{cell['ci_low'] * 100:.2f}, {cell['ci_high'] * 100:.2f}]"})
        pvals.append(np.nan)


def _table6_frame(rows, marks, index, adjusted, *, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 6 and its suffixes from its rows, their interval marks and Holm-adjusted p: p printed, ``*`` on Δ
    where the adjusted p is under ``alpha``, counts as text and empty cells for the rows without them."""
    columns = ["base", "adapted", "Δ", "p", "detectable", "test", "SD seeds", "seeds", "splits", "texts", "steps"]
    columns += ["device"]
    columns += ["precision", "ran"]
    table = pd.DataFrame(rows, columns=columns, index=pd.Index(index, name="model · method · protocol · dataset"))
    table["p"] = table["p"].astype(object)
    suffix = pd.DataFrame("", index=table.index, columns=table.columns, dtype=object)
    for i, (mark, p) in enumerate(zip(marks, adjusted)):
        for col, text in mark.items():
            suffix.iat[i, columns.index(col)] = text
        if not np.isnan(p):
            table.iat[i, columns.index("p")] = stats.format_p(p)
            if p < alpha:
                suffix.iat[i, columns.index("Δ")] = "*" + suffix.iat[i, columns.index("Δ")]
    for col in ("seeds", "splits", "texts"):
        table[col] = table[col].map(lambda v: "" if pd.isna(v) else str(int(v))).astype(object)
    text = ("test", "SD seeds", "steps", "device", "precision", "ran")
    table = table.astype({c: object for c in text}).fillna({c: "" for c in text})
    return table, suffix


def costs(meta: dict, timings: dict, model_names: dict | None = None) -> pd.DataFrame:
    """Per job: steps, device, precision (from the scores' metadata) and the seconds (from the timings files)."""
    model_names = model_names or {}
    rows = []
    for key in sorted(meta):
        t = timings.get(key, {})
        training = meta[key].get("training", {})
        rows.append(
            {
                "job": f"{model_names.get(key[0], key[0])} · {METHOD_NAMES.get(key[1], key[1])} · {key[2]} · "
                f"{header_label(key[3])} · seed {key[4]}",
                "steps": training.get("steps", np.nan),
                "device": training.get("device", ""),
                "precision": training.get("precision", ""),
                "train_seconds": t.get("train_seconds", np.nan),
                "eval_seconds": t.get("eval_seconds", np.nan),
                "total_seconds": t.get("total_seconds", np.nan),
            }
        )
    return pd.DataFrame(rows).set_index("job")


def figure(long: pd.DataFrame, out_path, model_names: dict | None = None) -> None:
    """Mean V-measure x 100 over training steps (mean over seeds, min-max band), one panel per dataset, one line
    per (model, method, protocol); step 0 is the base model."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from tecb.report.figures import legend_below_panels

    model_names = model_names or {}
    long = long[~long.method.isin(CONTROLS)]  # a control trains nothing: no curve
    datasets = dataset_order(long.dataset.unique()) if len(long) else []
    ncols = max(1, min(3, len(datasets)))
    nrows = max(1, -(-len(datasets) // ncols))
    fig = Figure(figsize=(4.2 * ncols, 3.2 * nrows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    per_seed = long.groupby(KEYS + ["seed", "step"], as_index=False).v_measure.mean()
    curves = list(dict.fromkeys(zip(per_seed.model, per_seed.method, per_seed.variant)))
    for ax, dataset in zip(axes.flat, datasets):
        for i, (model, method, variant) in enumerate(curves):
            part = per_seed[
                (per_seed.model == model)
                & (per_seed.method == method)
                & (per_seed.variant == variant)
                & (per_seed.dataset == dataset)
            ]
            if part.empty:
                continue
            g = part.groupby("step").v_measure.agg(["mean", "min", "max"]) * 100
            color = colors[i % len(colors)]
            name = f"{model_names.get(model, model)} {METHOD_NAMES.get(method, method)} ({variant})"
            ax.plot(g.index, g["mean"], marker="o", ms=3, color=color, label=name)
            ax.fill_between(g.index, g["min"], g["max"], color=color, alpha=0.2, linewidth=0)
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("optimizer step (0 = base model)")
        ax.set_ylabel("V-measure x 100")
    legend_below_panels(fig, axes, len(datasets), ncols)
    with matplotlib.rc_context({"svg.hashsalt": "tecb"}), atomic_path(out_path) as tmp:
        ext = Path(out_path).suffix.lstrip(".") or "png"
        fig.savefig(
            tmp,
            format=ext,
            dpi=150,
            bbox_inches="tight",
            metadata={"Date": None} if ext == "svg" else {"Software": None},
        )


@dataclass(frozen=True, kw_only=True)
class ReportInputs:
    """The files Table 6 is made from: per training job its ``scores`` and ``timings`` file, ``keys`` naming
    each job ``(model, method, variant, dataset, seed)`` in the order of both, and ``chance`` (dataset -> the
    chance rule's file, :func:`tecb.scoring.chance.run`; None or empty: no chance rows)."""

    keys: Sequence[Sequence]
    scores: Sequence
    timings: Sequence
    chance: Mapping | None = None
    #: each job's labels file, in the order of ``keys`` (``tables.statistics.labels``; empty: not given, the
    #: analytic test; :func:`read_predictions`)
    labels: Sequence = ()


def render(
    inputs: ReportInputs,
    outputs: dict,
    *,
    statistics: stats.Statistics,
    model_names: dict | None = None,
    split_kinds: dict | None = None,
    contrasts_declared: Sequence[Mapping] = (),
    log=print,
) -> None:
    """Workflow entry point: ``outputs`` holds ``scores`` (Parquet), ``figure`` (PNG), ``table6``, ``costs`` and
    ``contrasts`` (format -> path; without ``contrasts``: none written). ``statistics``: the config's
    ``tables.statistics`` with the run's seed (:meth:`tecb.report.stats.Statistics.from_config`);
    ``contrasts_declared``: the config's ``tables.contrasts`` (``a``, ``b``; :class:`Contrast`)."""
    import pyarrow as pa

    long, meta = collect(inputs.scores, inputs.keys)
    write_table(pa.Table.from_pandas(long, preserve_index=False), outputs["scores"])
    saved = read_predictions(inputs.labels, inputs.keys) if inputs.labels else None
    table, suffix = table6(
        long,
        meta,
        statistics=statistics,
        model_names=model_names,
        split_kinds=split_kinds,
        chance={d: pd.read_parquet(p) for d, p in (inputs.chance or {}).items()},
        predictions=saved,
    )
    protocols = sorted({m["protocol"]["variant"] for m in meta.values()})
    positive_controls = bool(set(protocols) & set(POSITIVE_CONTROLS))
    notes = table6_notes(
        long, meta, statistics=statistics, split_kinds=split_kinds, positive_controls=positive_controls
    )
    write_formats(
        table,
        outputs["table6"],
        f"Table 6: embeddings trained for clustering against their base model, V-measure x 100 "
        f"(protocols: {', '.join(protocols)}).",
        footnotes=notes,
        suffix=suffix,
    )
    timings = {}
    for key, path in zip(inputs.keys, inputs.timings):
        model, method, variant, dataset, s = key
        timings[(model, method, variant, dataset, int(s))] = json.loads(Path(path).read_text(encoding="utf-8"))
    cost = costs(meta, timings, model_names)
    write_formats(cost, outputs["costs"], "Training cost per job (seconds vary from run to run).")
    figure(long, outputs["figure"], model_names)
    log(to_markdown(table, suffix=suffix))
    if "contrasts" in outputs:
        declared = [Contrast(a=c["a"], b=c["b"]) for c in contrasts_declared]
        found, skipped = contrasts(
            long,
            meta,
            declared=declared,
            statistics=statistics,
            model_names=model_names,
            split_kinds=split_kinds,
            predictions=saved,
        )
        write_formats(
            found,
            outputs["contrasts"],
            "Contrasts declared in tables.contrasts: V-measure x 100 of arm a minus arm b on the same splits "
            "(k-means on raw embeddings), per split design and over all splits.",
            footnotes=[contrast_note(statistics, bool(split_kinds), positive_controls)] + skipped,
        )


def table6_notes(
    long: pd.DataFrame, meta: dict, *, statistics: stats.Statistics, split_kinds: dict | None, positive_controls: bool
) -> list[str]:
    """Table 6's footnotes: the columns, the intervals and test, the protocols (``positive_controls``: the run has
    ``oracle`` rows, explained), the chance row and ``ran``, then the noise floor and the control where present."""
    test, alpha, confidence = statistics.test, statistics.alpha, statistics.confidence
    notes = [
        "base: the un-adapted model, adapted: after training (mean over seeds), both clustered on the same splits "
        "(k-means on raw embeddings); Δ = adapted - base.",
        (
            f"[low, high]: base: {confidence:.0%} bootstrap interval of the mean over splits; adapted: t interval "
            "of the mean over splits and training seeds, the splits' text variance widened per split kind for "
            "splits subsampled from one pool, the clustering variance from the restarts where scored with several "
            "(docs/statistics.md), the seeds' variance over seeds (with 1 seed not estimated), Welch-Satterthwaite "
            f"degrees of freedom; Δ: as its row's test says ({TEST_NOTE}) *: the two-sided t test of the mean Δ (p < {1 - confidence:g} exactly when Δ's "
            f"interval excludes 0) is significant after Holm's adjustment over the table's rows (α = {alpha:g}), so a "
            "* always has an interval that excludes 0; p: that adjusted p-value. detectable: the smallest true Δ the "
            f"row's test finds with 80 % power at α = {1 - confidence:g} (its own standard error and degrees of "
            f"freedom). splits, texts: what each row rests on; splits of fewer than {stats.MIN_SPLIT_TEXTS} texts are "
            "left out of every row's adapted, Δ and test."
            if test == "mean"
            else f"[low, high]: {confidence:.0%} bootstrap interval of the mean over splits (adapted and Δ: over "
            "training seeds and splits, a two-level bootstrap, so the seeds' variance is in it; with 1 seed it is "
            f"not estimated). *: the two-sided paired {test} test over splits is significant for every seed (an "
            f"intersection-union test: p = 2 min(max over seeds of each direction's p)) after Holm's adjustment "
            f"over the table's rows (α = {alpha:g}); p: that adjusted p-value"
            + (" (a rank test: of a symmetric shift, not of the mean Δ)." if test == "wilcoxon" else ".")
        )
        + (
            f" As in Table 2, {', '.join(sorted(split_kinds))}: splits resampled within their design and the test "
            "stratified by design."
            if split_kinds
            else ""
        ),
        "Protocols: transductive = the evaluated dataset's own texts, no labels (as Table 5); lodo = labelled "
        "instances of the other datasets (its own corpus left out), no evaluated text or label; disjoint = "
        "instances from half of the dataset's categories, evaluated on its splits restricted to the other half."
        + (ORACLE_NOTE if positive_controls else ""),
        f"{CHANCE_NOTE}steps: optimizer steps of training (seconds: timings/adapt/costs.csv). ran: what the training really did "
        "(ClusterNS: the step its in-batch clustering started, k, the share of batches with hard and false "
        "negatives; NEVER CLUSTERED = it trained plain SimCSE, a failure under adapt.strict).",
    ]
    notes += [n for n in (noise_floor_note(long, meta), control_note(meta)) if n]
    return notes


ORACLE_NOTE = (
    " oracle = POSITIVE CONTROL, not a result: instances from the evaluated dataset's own labelled texts, all the "
    "categories of the scheme disjoint halves, evaluated on all its splits as lodo. It leaks the evaluated labels "
    "on purpose: an upper reference that shows the harness (training, scoring, test) can detect a gain at all, "
    "against which an insignificant method row is read (random head · oracle: the same untrained head, its "
    "start). Its rows' p are Holm-adjusted among the controls' rows, apart from the methods'."
)


def control_note(meta: dict) -> str:
    """Table 6's note on its control rows (:data:`tecb.adapt.training.CONTROLS`); empty where none ran."""
    if not any(k[1] in CONTROLS for k in meta):
        return ""
    return (
        "random head: a control, not a method: the base model with the untrained projection head that COB and "
        "triplet put after the pooling (the same weights as theirs for the same seed), scored after no optimizer "
        "step under the same protocol and splits. Its Δ is what the head alone does; a COB or triplet row means "
        "something only as far as it differs from it (adapt/contrasts: cob − random_head, triplet − random_head). "
        "The controls' p are Holm-adjusted among the controls' rows, apart from the methods'."
    )


def noise_floor_note(long: pd.DataFrame, meta: dict, alpha: float = 0.05, power: float = 0.8) -> str:
    """Table 6's note on the smallest Δ its seeds can detect per dataset (:func:`tecb.report.stats.noise_floor`
    of the arms' per-seed means over splits); empty where no arm has two seeds."""
    rows = [
        {"arm": key[:3], "dataset": key[3], "seed": seed, "score": float(per_seed[seed].mean() * 100)}
        for key, (_, per_seed) in _final_scores(long, meta).items()
        for seed in per_seed.columns
    ]
    return noise_floor_text(rows, alpha=alpha, power=power)


def noise_floor_text(rows: list[dict], *, alpha: float, power: float) -> str:
    """The noise-floor note of Tables 5 and 6 from per-seed ``rows`` (arm, dataset, seed, score); empty where no
    arm has two seeds."""
    if not rows:
        return ""
    floor = stats.noise_floor(pd.DataFrame(rows), alpha=alpha, power=power).dropna(subset=["vs_base"])
    if floor.empty:
        return ""
    parts = [
        f"{header_label(r.dataset)}: seed SD {r.sd_seeds:.2f}, Δ ≥ {r.vs_base:.2f} against the base, "
        f"≥ {r.vs_arm:.2f} between two methods"
        for r in floor.itertuples()
    ]
    return (
        f"Noise floor, a LOWER BOUND (training seeds alone, SD pooled over the methods, {int(floor.seeds.median())} "
        f"seeds; the splits' text and clustering variance left out, so each row's own figure, detectable, is the "
        f"one to read): the smallest Δ detected with {power:.0%} power at α = {alpha:g} by a t test over seeds: "
        + "; ".join(parts)
        + "."
    )


def contrast_note(statistics: stats.Statistics, kinds: bool, positive_controls: bool = False) -> str:
    """The footnote of the contrasts table; ``positive_controls``: the run has an ``oracle`` arm (its contrasts
    join the controls' Holm family)."""
    return (
        f"delta = mean_a − mean_b; [ci_low, ci_high]: its {statistics.confidence:.0%} interval and p its two-sided "
        "test, from the same resamples of splits (within their design where the dataset records designs, widened "
        "for splits subsampled from one pool) and of each arm's training seeds (seeds: a / b; the base model has "
        f"none), so p < {1 - statistics.confidence:g} exactly when the interval excludes 0; p_holm: Holm over "
        "every row of this table (the rows with a control, random_head"
        + (" or an oracle arm (the positive control)" if positive_controls else "")
        + ", among themselves, apart from the others); "
        f"*: p_holm < {statistics.alpha:g}. {TEST_NOTE} Bounds printed with the decimals their sign needs. detectable: the smallest true delta the row's test "
        "finds with 80 % power. splits, texts: what each row rests on; splits of fewer than "
        f"{stats.MIN_SPLIT_TEXTS} texts are left out of every row."
        + (" design: all splits, or one split design alone." if kinds else "")
    )


@dataclass(frozen=True, kw_only=True)
class Contrast:
    """One declared comparison ``a`` minus ``b`` (the config's ``tables.contrasts``). An arm is ``method`` or
    ``method/variant`` (a protocol or argue objective: ``argue/similarity``), ``base`` (the un-adapted model the
    other arm trained from) or ``*`` (every trained arm, each against ``b``). Arms that name no variant are
    compared within the same variant (COB lodo against triplet lodo); always within one model and dataset."""

    a: str
    b: str

    @property
    def name(self) -> str:
        return f"{self.a} − {self.b}"


def _arm_matches(arm: str, key) -> bool:
    if arm == "*":  # every trained arm: not a control
        return key[1] not in CONTROLS
    method, _, variant = arm.partition("/")
    return key[1] == method and (not variant or key[2] == variant)


def split_sizes(long: pd.DataFrame, key: tuple) -> pd.Series:
    """Split -> its number of texts for one job ``key`` (model, method, variant, dataset); NaN where the scores
    do not record it."""
    part = long[(long.model == key[0]) & (long.dataset == key[3])]
    if "n_texts" not in part:
        return pd.Series(dtype=float)
    return part.groupby("split").n_texts.max().astype(float)


def arm_noise(long: pd.DataFrame, key: tuple, seeds: list, splits) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The clustering variance (the restarts' variance / R, :func:`tecb.report.stats.restart_variance`) of the
    base's score per split of ``splits`` and of each seed's final score (seeds x splits); (None, None) where the
    scores have no restarts (R = 1)."""
    if "v_measure_restarts" not in long:
        return None, None
    part = long[(long.model == key[0]) & (long.method == key[1]) & (long.variant == key[2]) & (long.dataset == key[3])]
    part = part.assign(noise=part.v_measure_restarts.map(stats.restart_variance))
    base = part[part.step == 0].groupby("split").noise.mean().reindex(splits).to_numpy(float)
    rows = []
    for s in seeds:
        mine = part[part.seed == s]
        rows.append(mine[mine.step == mine.step.max()].groupby("split").noise.mean().reindex(splits).to_numpy(float))
    a = np.asarray(rows)
    if np.isnan(base).any() or np.isnan(a).any():
        return None, None
    return base, a


def _arm_scores(long: pd.DataFrame, key: tuple, seeds: list) -> tuple[pd.Series, list, pd.DataFrame]:
    """One job's scores, ``key`` (model, method, variant, dataset) over ``seeds``: the base per split (step 0),
    each seed's rows of its final step, and those as splits x seeds."""
    part = long[(long.model == key[0]) & (long.method == key[1]) & (long.variant == key[2]) & (long.dataset == key[3])]
    base = part[part.step == 0].groupby("split").v_measure.mean()
    finals = [part[(part.seed == s) & (part.step == part[part.seed == s].step.max())] for s in seeds]
    per_seed = pd.concat([f.groupby("split").v_measure.mean().rename(s) for f, s in zip(finals, seeds)], axis=1)
    return base, finals, per_seed


def _final_scores(long: pd.DataFrame, meta: dict) -> dict:
    """(model, method, variant, dataset) -> (base per split, splits x seeds of the final step), for every job
    that trained (skipped ones left out)."""
    out = {}
    for key in dict.fromkeys(k[:4] for k in meta):
        seeds = sorted(k[4] for k in meta if k[:4] == key)
        if any(meta[(*key, s)]["protocol"].get("skipped") for s in seeds):
            continue
        base, _, per_seed = _arm_scores(long, key, seeds)
        out[key] = (base, per_seed)
    return out


def _pairs(contrast: Contrast, keys) -> list[tuple]:
    """(a's key, b's key or None for the base) of every comparison ``contrast`` declares among ``keys``."""
    if contrast.a == "base":
        raise ValueError(f"tables.contrasts: {contrast.name}: `base` can only be the second arm (b)")
    a_keys = [k for k in keys if _arm_matches(contrast.a, k)]
    if contrast.b == "base":
        return [(k, None) for k in a_keys]
    same_variant = "/" not in contrast.a and "/" not in contrast.b
    return [
        (ka, kb)
        for ka in a_keys
        for kb in keys
        if kb != ka
        and _arm_matches(contrast.b, kb)
        and ka[0] == kb[0]
        and ka[3] == kb[3]
        and (ka[2] == kb[2] or not same_variant)
    ]


def contrasts(
    long: pd.DataFrame,
    meta: dict,
    *,
    declared: Sequence[Contrast],
    statistics: stats.Statistics,
    model_names: dict | None = None,
    split_kinds: dict | None = None,
    predictions: Mapping | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The declared contrasts computed: one row per (contrast, model, arms, dataset, split design) with the means
    of both arms, Δ = a − b and its interval and two-sided p (:func:`tecb.report.contrasts.compare`: the paired
    text-level bootstrap where ``predictions``, :func:`read_predictions`, holds both arms' for every seed, else
    :func:`tecb.report.stats.contrast_test` with the datasets' split overlap; the ``test`` column says which), p
    Holm-adjusted over every row of the table; ``design`` is ``all`` (every split, stratified by kind) or one split
    kind of the datasets that record kinds. Also the notes: the contrasts whose arms this run does not have
    (skipped, not an error). V-measure x 100."""
    model_names = model_names or {}
    scores = _final_scores(long, meta)
    rows, notes = [], []
    for contrast in declared:
        pairs = _pairs(contrast, list(scores))
        if not pairs:
            notes.append(skipped(contrast.name))
            continue
        for ka, kb in pairs:
            arms = _pair_arrays(long, scores, ka, kb)
            arms["predictions"] = _pair_predictions(predictions, arms, ka, kb, scores)
            kinds_of = (split_kinds or {}).get(ka[3])
            kinds = np.asarray([kinds_of.get(int(s)) for s in arms["splits"]], dtype=object) if kinds_of else None
            designs = [("all", np.ones(len(arms["splits"]), bool))]
            if kinds is not None:
                designs += [(k, kinds == k) for k in dict.fromkeys(kinds.tolist())]
            named = {
                "control": is_control(ka) or (kb is not None and is_control(kb)),
                "contrast": contrast.name,
                "model": model_names.get(ka[0], ka[0]),
                "a": f"{METHOD_NAMES.get(ka[1], ka[1])} {ka[2]}",
                "b": "base" if kb is None else f"{METHOD_NAMES.get(kb[1], kb[1])} {kb[2]}",
                "dataset": ka[3],
            }
            rows += [_design_row(named, arms, design, mask, kinds, statistics) for design, mask in designs]
    columns = ["contrast", "model", "a", "b", "dataset", "design", "splits", "texts", "seeds", "mean_a", "mean_b"]
    key = ["contrast", "model", "a", "dataset", "design"]
    controls = [r["control"] for r in rows]
    return contrasts_table(rows, columns=columns, key=key, alpha=statistics.alpha, controls=controls), notes


def _pair_arrays(long: pd.DataFrame, scores: dict, ka: tuple, kb: tuple | None) -> dict:
    """The two arms of one comparison on their shared usable splits: ``a`` and ``b`` (seeds x splits; the base
    as one row where ``kb`` is None), their clustering variance ``noise_a``, ``noise_b`` (None where either arm
    has none), the splits' ``sizes`` and the ``splits`` themselves, and ``paired`` (b has seeds of its own)."""
    base, a_seeds = scores[ka]
    b_seeds = base.to_frame("base") if kb is None else scores[kb][1]
    joined = pd.concat([a_seeds.add_prefix("a"), b_seeds.add_prefix("b")], axis=1, join="inner").dropna()
    sizes = split_sizes(long, ka).reindex(joined.index)
    joined = joined[stats.usable_splits(sizes.to_numpy(float))]  # the rule for tiny splits
    sizes = sizes.reindex(joined.index)
    a = joined[[c for c in joined if str(c).startswith("a")]].to_numpy(float).T
    b = joined[[c for c in joined if str(c).startswith("b")]].to_numpy(float).T
    noise_base, noise_a = arm_noise(long, ka, list(a_seeds.columns), joined.index)
    noise_b = noise_base[None, :] if kb is None and noise_base is not None else None
    if kb is not None:
        noise_b = arm_noise(long, kb, list(b_seeds.columns), joined.index)[1]
    if noise_a is None or noise_b is None:
        noise_a = noise_b = None
    return {
        "a": a,
        "b": b,
        "noise_a": noise_a,
        "noise_b": noise_b,
        "sizes": sizes,
        "splits": joined.index,
        "paired": kb is not None,
    }


def _pair_predictions(predictions: Mapping | None, arms: dict, ka: tuple, kb: tuple | None, scores: dict):
    """Both arms' saved predictions on the comparison's splits (the base: each of a's seeds' step 0), or None."""
    if not predictions:
        return None
    a_seeds = list(scores[ka][1].columns)
    side_a = [predictions.get((*ka, s)) for s in a_seeds]
    side_b = side_a if kb is None else [predictions.get((*kb, s)) for s in scores[kb][1].columns]
    if any(j is None for j in (*side_a, *side_b)):
        return None
    which = "base" if kb is None else "final"
    return paired_predictions([j["final"] for j in side_a], [j[which] for j in side_b], arms["splits"])


def _design_row(named: dict, arms: dict, design: str, mask, kinds, statistics) -> dict:
    """One row of the contrasts table: the comparison ``named`` (control, contrast, model, a, b, dataset) on the
    splits of ``mask`` (one split ``design``, or ``all`` stratified by ``kinds``), before Holm and printing."""
    a, b, noise_a, noise_b, sizes = arms["a"], arms["b"], arms["noise_a"], arms["noise_b"], arms["sizes"]
    dataset = named["dataset"]
    result = compare(
        a[:, mask],
        b[:, mask],
        statistics=statistics,
        design=dataset if design == "all" else f"{dataset}/{design}",
        strata=list(kinds) if design == "all" and kinds is not None else None,
        noise_a=None if noise_a is None else noise_a[:, mask],
        noise_b=None if noise_b is None else noise_b[:, mask],
        predictions=None if arms.get("predictions") is None else arms["predictions"].columns(mask),
    )
    return named | {
        "design": design,
        "splits": int(mask.sum()),
        "texts": int(sizes[mask].sum()) if sizes.notna().all() else np.nan,
        "seeds": f"{a.shape[0]} / {b.shape[0]}" if arms["paired"] else str(a.shape[0]),
        "mean_a": a[:, mask].mean() * 100,
        "mean_b": b[:, mask].mean() * 100,
        **result,
    }
