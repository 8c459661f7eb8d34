"""Where chance lies (issue 21.3): the scores of random partitions, the floor under every score table.

- :func:`chance_scores` / :func:`run`: for each split of a dataset, ``n_draws`` seeded random partitions of its
  texts into as many clusters as the split has gold labels (each text drawn uniformly into one of the k clusters:
  a clusterer that sees no text, given the k that k-means is given), scored with the same metrics as the real
  clusterings (:func:`tecb.cluster.metrics.score`); one row per (split, draw).
- :func:`mteb_v2_chance`: MTEB v2's protocol (:mod:`tecb.scoring.mteb_v2`) run on seeded random vectors.

:mod:`tecb.report.chance` summarises both per table column and draws the chance row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tecb.cluster.metrics import score

METRICS = ("v_measure", "ami", "ari", "homogeneity", "completeness")


def chance_scores(splits: pd.DataFrame, *, n_draws: int, seed: int) -> pd.DataFrame:
    """One row per (split, draw): ``split, draw, n_texts, n_labels`` and the :data:`METRICS` of a uniformly random
    partition of the split's rows into as many clusters as it has labels. Seeded: one generator from ``seed``,
    consumed split by split in ascending order."""
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    rng = np.random.default_rng(seed)
    rows = []
    for split in sorted(splits["split"].unique()):
        gold = splits.loc[splits["split"] == split, "label"].to_numpy()
        k = len(pd.unique(gold))
        for draw in range(n_draws):
            s = score(gold, rng.integers(0, k, size=gold.size))
            rows.append(
                {"split": int(split), "draw": draw, "n_texts": s["n_texts"], "n_labels": s["n_labels"]}
                | {m: s[m] for m in METRICS}
            )
    return pd.DataFrame(rows, columns=["split", "draw", "n_texts", "n_labels", *METRICS])


def run(splits_path, out_path, *, n_draws: int, seed: int, log=print) -> pd.DataFrame:
    """:func:`chance_scores` of the dataset at ``splits_path`` to the Parquet file ``out_path``."""
    import pyarrow as pa

    from tecb.io import write_table

    rows = chance_scores(pd.read_parquet(splits_path), n_draws=n_draws, seed=seed)
    rows = rows.astype({"split": "int32", "draw": "int32", "n_texts": "int32", "n_labels": "int32"})
    write_table(pa.Table.from_pandas(rows, preserve_index=False).replace_schema_metadata(None), out_path)
    per_draw = rows.groupby("draw").v_measure.mean()
    log(f"{splits_path}: random partition V-measure {per_draw.mean():.4f} over {n_draws} draws")
    return rows


def mteb_v2_chance(
    splits_path, out_path, *, dataset: str, n_draws: int, seed: int, max_documents=None, log=print, **options
) -> pd.DataFrame:
    """The chance floor of the MTEB v2 table: :func:`tecb.scoring.mteb_v2.run` (the same pool, sub-sample,
    bootstrap samples and k-means as a model's v2 score) on ``n_draws`` sets of seeded random vectors that carry
    nothing of the texts, so each k-means partition is a random partition with the level's number of clusters.
    Writes one row per (draw, level, bootstrap) (``v_measure``, ``ami``) to ``out_path``; a v2 chance cell is the
    mean over draws of each draw's mean."""
    import tempfile
    from pathlib import Path

    import pyarrow as pa

    from tecb.io import embedding_batch, embedding_schema, write_table
    from tecb.scoring import mteb_v2

    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    n = int(pd.read_parquet(splits_path, columns=["text_id"]).text_id.max()) + 1
    rng = np.random.default_rng(seed)
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        vectors, rows_path = Path(tmp) / "random.parquet", Path(tmp) / "rows.parquet"
        schema = embedding_schema(8, {"n_texts": n})
        for draw in range(n_draws):
            x = rng.standard_normal((n, 8)).astype(np.float32)
            write_table(pa.Table.from_batches([embedding_batch(schema, 0, x)]), vectors)
            rows = mteb_v2.run(
                vectors,
                splits_path,
                rows_path,
                dataset=dataset,
                seed=seed,
                max_documents=max_documents,
                log=lambda *a: None,
                **options,
            )
            frames.append(rows[["level", "bootstrap", "v_measure", "ami"]].assign(draw=np.int32(draw)))
    out = pd.concat(frames, ignore_index=True)[["draw", "level", "bootstrap", "v_measure", "ami"]]
    write_table(pa.Table.from_pandas(out, preserve_index=False).replace_schema_metadata(None), out_path)
    log(f"{dataset}: MTEB v2 protocol on random vectors: V-measure {out.v_measure.mean():.4f} over {n_draws} draws")
    return out
