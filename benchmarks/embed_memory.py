"""What a transformer embed job's peak memory grows with (issue 56: the paper-scale tiny-BERT embed_batch job
declared 1,771 MB and peaked at 1,980 MB).

Each case embeds the first ``n`` texts of a texts.parquet with a sentence-transformers model, as an embed job
does (:func:`tecb.embed.encode.embed_dataset`, ``batch_size`` 32, torch on ``--threads`` threads), in a fresh
Python process, and records the kernel's peak RSS (``VmHWM``) after the imports and at the end; beside it the
declaration of :func:`tecb.embed.job.job_memory_mb` for that file, before issue 56 (1.3 x (1,000 MB + 10 x the
texts' bytes + twice the model's files)) and now. Two cases repeat one with a fixed malloc mmap threshold
(``MALLOC_MMAP_THRESHOLD_=65536``): what the heap keeps after the forward passes, fragmented.

    python benchmarks/embed_memory.py --texts results/paper-scale/datasets/TenKGnadClusteringP2P/texts.parquet \\
        --model results/paper-scale/models/tiny-bert --out benchmarks/embed_memory.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

#: (texts, chunk_size, fixed mmap threshold)
CASES = [(250, 4096, False), (1000, 4096, False), (2000, 4096, False), (2000, 1000, False), (4096, 4096, False),
         (2000, 4096, True), (4096, 4096, True)]  # fmt: skip

CHILD = """
import json, sys
import torch
from tecb.embed.encode import EmbedJob, embed_dataset
def hwm():
    return int(next(x for x in open('/proc/self/status') if x.startswith('VmHWM')).split()[1]) / 1024
torch.set_num_threads(int(sys.argv[4]))
spec = {'kind': 'tiny-bert', 'path': sys.argv[2], **json.loads(sys.argv[5])}
job = EmbedJob.from_spec(sys.argv[1], sys.argv[3], spec, {'device': 'cpu', 'batch_size': 32}, seed=None)
r0 = hwm()
embed_dataset(job, log=lambda *a: None)
print(json.dumps({'imports_mb': round(r0, 1), 'peak_mb': round(hwm(), 1)}))
"""


def old_declaration_mb(text_bytes: int, model_bytes: int) -> int:
    """:func:`tecb.embed.job.job_memory_mb` of a transformer before issue 56."""
    return int(1.3 * (1000 + -(-(10 * text_bytes + 2 * model_bytes) // 1_000_000)))


def text_bytes(path) -> int:
    """The texts' bytes as :func:`tecb.embed.job.job_memory_mb` counts them (the text column's uncompressed pages)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    column = meta.schema.names.index("text")
    return sum(meta.row_group(g).column(column).total_uncompressed_size for g in range(meta.num_row_groups))


def measure(texts: Path, model: Path, n: int, chunk: int, fixed: bool, threads: int, tmp: Path) -> dict:
    import pyarrow.parquet as pq

    part = tmp / f"texts_{n}.parquet"
    pq.write_table(pq.read_table(texts).slice(0, n), part)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), HF_HUB_OFFLINE="1")
    if fixed:
        env["MALLOC_MMAP_THRESHOLD_"] = "65536"
    options = json.dumps({} if chunk == 4096 else {"chunk_size": chunk})
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(part), str(model), str(tmp / "emb.parquet"), str(threads), options],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {**json.loads(out.stdout.splitlines()[-1]), "path": part}


def main(argv=None) -> None:
    from tecb.embed.job import job_memory_mb
    from tecb.embed.spec import model_files

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2, help="embed.threads (the paper-scale run's: 2)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "embed_memory.md"))
    ap.add_argument("--batch", nargs="*", default=[], help="every texts.parquet of an embed_batch job (the run's)")
    ap.add_argument("--batch-peak", type=float, help="that job's measured peak RSS, MB")
    args = ap.parse_args(argv)
    model_bytes = sum(os.path.getsize(f) for f in model_files(args.model))
    lines = [
        "# A transformer embed job's peak memory vs its declaration (issue 56)",
        "",
        f"Written by `python benchmarks/embed_memory.py` (the first n texts of "
        f"`{Path(args.texts).parent.name}`, the paper-scale run's tiny BERT, {args.threads} threads, batch size 32,"
        " one fresh process each). Declared = `tecb.embed.job.job_memory_mb` for those texts; old = before issue 56 "
        "(1.3 x (1,000 MB + 10 x the text + twice the model)). Fixed mmap threshold = the same job with "
        "`MALLOC_MMAP_THRESHOLD_=65536` (a diagnosis, not how jobs run: glibc then returns large freed blocks, so the "
        "peak shows what the heap keeps fragmented otherwise).",
        "",
        "| texts | text MB | chunk | fixed mmap threshold | after imports MB | peak MB | old declared | old / peak "
        "| declared now | now / peak |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for n, chunk, fixed in CASES:
            got = measure(Path(args.texts), Path(args.model), n, chunk, fixed, args.threads, Path(tmp))
            size = text_bytes(got["path"])
            old = old_declaration_mb(size, model_bytes)
            now = job_memory_mb({"kind": "tiny-bert"}, texts=got["path"], model=args.model)
            peak = got["peak_mb"]
            lines.append(
                f"| {n} | {size / 1e6:.2f} | {chunk} | {'yes' if fixed else 'no'} | {got['imports_mb']:.0f} "
                f"| {peak:.0f} | {old} | {old / peak:.2f} | {now} | {now / peak:.2f} |"
            )
            print(lines[-1], flush=True)
    if args.batch:
        largest = max(text_bytes(p) for p in args.batch)
        old = old_declaration_mb(largest, model_bytes)
        now = job_memory_mb({"kind": "tiny-bert"}, texts=args.batch, model=args.model)
        lines += [
            "",
            f"The embed_batch job of this model over {len(args.batch)} datasets (largest {largest / 1e6:.1f} MB of "
            f"text): declared {old} MB before, {now} MB now"
            + (f"; it peaked at {args.batch_peak:.0f} MB (now / peak {now / args.batch_peak:.2f})." if args.batch_peak
               else "."),
        ]  # fmt: skip
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
