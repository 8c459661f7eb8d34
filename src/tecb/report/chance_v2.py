"""The chance floor of the MTEB v2 table (issue 21.3): the v2 protocol of :mod:`tecb.report.mteb_v2` run on seeded
random vectors. Apart from :mod:`tecb.report.chance` because it imports :mod:`tecb.report.mteb_v2`, which imports
:mod:`tecb.report.chance` to draw the row."""

from __future__ import annotations

import numpy as np
import pandas as pd


def mteb_v2_chance(
    splits_path, out_path, *, dataset: str, n_draws: int, seed: int, max_documents=None, log=print, **options
) -> pd.DataFrame:
    """The chance floor of the MTEB v2 table: :func:`tecb.report.mteb_v2.run` (the same pool, sub-sample,
    bootstrap samples and k-means as a model's v2 score) on ``n_draws`` sets of seeded random vectors that carry
    nothing of the texts, so each k-means partition is a random partition with the level's number of clusters.
    Writes one row per (draw, level, bootstrap) (``v_measure``, ``ami``) to ``out_path``; a v2 chance cell is the
    mean over draws of each draw's mean."""
    import tempfile
    from pathlib import Path

    import pyarrow as pa

    from tecb.io import embedding_batch, embedding_schema, write_table
    from tecb.report import mteb_v2

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
