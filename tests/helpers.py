"""What several test modules share (no test module imports another): snakemake's dry-run output read one way, the
small German news corpus of the model-kind tests, clustering and embedding inputs, an mteb encoder without a model.
Fixtures stay in conftest.py."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]

# --- snakemake's dry-run output ---------------------------------------------------------------------------------


def job_counts(output: str) -> dict[str, int]:
    """Job counts by rule from the "Job stats" table of a dry run; {} for "Nothing to be done"."""
    if "Nothing to be done" in output:
        return {}
    if "Job stats" not in output:
        raise AssertionError(f"no 'Job stats' table in the dry run's output:\n{output[-3000:]}")
    counts = {}
    for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", output[output.index("Job stats") :], re.M):
        if m.group(1) == "total":
            break
        counts[m.group(1)] = int(m.group(2))
    return counts


def _job_blocks(output: str):
    """``(rule, block)`` of every job a dry run (``snakemake -n``) lists, its block the lines under ``rule NAME:``."""
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) \w+:)", output):
        m = re.match(r"(?:local)?(?:rule|checkpoint) (\w+):", block.strip())
        if m:
            yield m.group(1), block


def planned_jobs(output: str) -> set[tuple]:
    """``{(rule, frozenset(wildcard items))}`` of every job a dry run lists."""
    jobs = set()
    for rule, block in _job_blocks(output):
        wc = re.search(r"^\s+wildcards: (.*)$", block, flags=re.M)
        items = frozenset(tuple(kv.split("=", 1)) for kv in wc.group(1).split(", ")) if wc else frozenset()
        jobs.add((rule, items))
    return jobs


def planned_inputs(output: str, rule: str) -> list[str]:
    """The input paths of the first job of ``rule`` a dry run lists (``-n --forcerun all``: the targets of all)."""
    block = next(b for r, b in _job_blocks(output) if r == rule)
    return re.search(r"^\s+input: (.*)$", block, flags=re.M).group(1).split(", ")


def planned_outputs(output: str) -> list[tuple[str, list[str]]]:
    """``(rule, output paths)`` of every job a dry run lists, without the ``(update)``/``(temporary)`` marks."""
    jobs = []
    for rule, block in _job_blocks(output):
        out = re.search(r"^\s+output: (.*)$", block, flags=re.M)
        outputs = [re.sub(r" \((update|temporary)\)$", "", o) for o in out.group(1).split(", ")] if out else []
        jobs.append((rule, outputs))
    return jobs


#: The rules whose jobs cost real time: what a changed config must not rerun needlessly.
EXPENSIVE = {"demo_data", "build_dataset", "tiny_bert", "model_digest", "embed", "reduce", "cluster", "pretrain"}


def expensive(jobs: set[tuple]) -> set[tuple]:
    """The planned expensive jobs as ``(rule, model, dataset, reduction, algorithm)`` (missing parts None)."""
    out = set()
    for rule, wc in jobs:
        if rule in EXPENSIVE:
            d = dict(wc)
            out.add((rule, d.get("model"), d.get("dataset"), d.get("reduction"), d.get("algorithm")))
    return out


def slurm_plan(workdir: Path, *args: str) -> list[dict]:
    """Every planned job/group job of a dry run with the SLURM profile (tests/slurm/plan.py)."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "slurm" / "plan.py"), "-n", "--workflow-profile", "profiles/slurm", *args],
        cwd=workdir, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [json.loads(line.split(" ", 1)[1]) for line in proc.stdout.splitlines() if line.startswith("TECB-PLAN ")]


def copy_of(project: Path, tmp_path: Path) -> Path:
    """A fresh copy of a module's finished ``project`` for one test (links kept as links)."""
    dest = tmp_path / "copy"
    shutil.copytree(project, dest, symlinks=True)
    return dest


# --- data ------------------------------------------------------------------------------------------------------

#: The columns of a score file (no timings: they are in results/{run}/timings/).
SCORE_COLUMNS = [
    "split",
    "n_texts",
    "n_labels",
    "n_clusters",
    "noise_fraction",
    "v_measure",
    "homogeneity",
    "completeness",
    "ami",
    "ari",
    "degenerate",
]

#: The nine categories of 10kGNAD.
GNAD_CATEGORIES = {
    "Sport",
    "International",
    "Web",
    "Kultur",
    "Panorama",
    "Etat",
    "Wissenschaft",
    "Inland",
    "Wirtschaft",
}

#: A small German news corpus, (text, label), four sentences each of politics, sport and culture.
POLITIK = [
    ("Die Regierung plant eine Reform der Rente.", "politik"),
    ("Die Opposition kritisiert den Haushalt des Ministers.", "politik"),
    ("Die Wahlbeteiligung in Bayern war niedrig.", "politik"),
    ("Der Bundestag hat das neue Gesetz beschlossen.", "politik"),
]
SPORT = [
    ("Der Stürmer erzielte in der letzten Minute das Siegtor.", "sport"),
    ("Der Trainer wurde nach der Niederlage entlassen.", "sport"),
    ("Das Finale der Meisterschaft findet in Berlin statt.", "sport"),
    ("Die Schwimmerin gewann die Goldmedaille.", "sport"),
]
KULTUR = [
    ("Das Museum zeigt Gemälde aus dem Barock.", "kultur"),
    ("Der Roman der Autorin wurde preisgekrönt.", "kultur"),
    ("Im Theater läuft eine neue Inszenierung von Faust.", "kultur"),
    ("Das Orchester spielte Werke von Beethoven.", "kultur"),
]
NEWS = POLITIK + SPORT + KULTUR


def small_embed_config(dataset: str, **embed) -> dict:
    """A config of one demo dataset (the demo's raw files: conftest.DEMO_SOURCES), TF-IDF (32 dims) and the tiny
    BERT, k-means on raw embeddings, one thread; ``embed`` adds to the embed section."""
    from conftest import DEMO_SOURCES

    return {
        "seed": 42,
        "sources": DEMO_SOURCES,
        "datasets": {dataset: {"source": "million_posts", "text": "s2s"}},
        "models": {
            "tfidf": {"name": "TF-IDF + SVD", "kind": "tfidf", "dim": 32},
            "tiny-bert": {"name": "tiny BERT", "kind": "tiny-bert"},
        },
        "embed": {"batch_size": 16, "device": "cpu", "threads": 1, **embed},
        "reductions": {},
        "algorithms": {"kmeans": copy.deepcopy(ALGORITHMS["kmeans"])},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
        "cluster": {"threads": 1},
    }


def write_news_tsv(path: Path, rows) -> Path:
    """``rows`` of (text, label) as the custom builder's TSV (columns ``text``, ``label``)."""
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{lab}\n" for t, lab in rows), encoding="utf-8")
    return path


def write_texts(path, texts) -> Path:
    """``texts`` as a dataset's texts.parquet (``text_id`` 0.., ``text``)."""
    pq.write_table(pa.table({"text_id": pa.array(range(len(texts)), pa.int32()), "text": texts}), path)
    return path


#: The embed tests' texts: 45 of several lengths.
EMBED_TEXTS = [
    f"Text Nummer {i} " + "sehr lang " * (i % 7) + ("über Bücher" if i % 2 else "über Sport") for i in range(45)
]

#: The four clustering algorithms as config/config.yaml specifies them.
ALGORITHMS = {
    "kmeans": {"method": "minibatch_kmeans", "params": {"batch_size": 500, "n_init": "auto"}},
    "agglomerative": {"method": "agglomerative"},
    "hdbscan": {"method": "hdbscan"},
    "dbstream": {"method": "dbstream"},
}


def blobs(n=600, dim=2, centers=4, seed=0):
    """Well-separated blobs; in 2-D compact like UMAP output (DBSTREAM's default radius is 1)."""
    from sklearn.datasets import make_blobs

    x, y = make_blobs(
        n_samples=n,
        centers=[[0, 0], [20, 0], [0, 20], [20, 20]][:centers] if dim == 2 else centers,
        n_features=dim,
        cluster_std=0.5 if dim == 2 else 1.0,
        random_state=seed,
    )
    return x.astype(np.float32), np.array([f"c{v}" for v in y], dtype=object)


def mteb_wrapper_vectors(model_dir, texts: list[str], task_name: str, batch_size: int):
    """The vectors mteb's own SentenceTransformerEncoderWrapper gives ``texts`` on the CPU, called as mteb's
    clustering evaluator calls it (a dataloader of the texts, the task's metadata, the test split)."""
    import mteb
    from mteb._create_dataloaders import _create_dataloader_from_texts
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    task = mteb.get_task(task_name).metadata
    wrapper = SentenceTransformerEncoderWrapper(str(model_dir), device="cpu")
    batches = _create_dataloader_from_texts(texts, batch_size=batch_size)
    return wrapper.encode(batches, task_metadata=task, hf_split="test", hf_subset="default", batch_size=batch_size)


class LookupEncoder:
    """An mteb encoder that returns fixed vectors for the texts it is given (no model, no network); counts its
    ``calls`` and the texts it has ``seen``."""

    mteb_model_meta = None

    def __init__(self, vectors):
        self.vectors = vectors
        self.calls = self.seen = 0

    def encode(self, inputs, **kwargs):
        out = np.stack([self.vectors[text] for batch in inputs for text in batch["text"]])
        self.calls += 1
        self.seen += len(out)
        return out

    def similarity(self, a, b):
        raise NotImplementedError

    def similarity_pairwise(self, a, b):
        raise NotImplementedError


def three_configurations_layer() -> dict:
    """A config layer of the cluster-stage workflow tests (test_cluster_batch, test_restarts): TF-IDF on a
    two-split dataset with three configurations, one on raw embeddings and two on PCA (a new dict each call)."""
    return {
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 32}},
        "datasets": {"TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s", "n_splits": 2}},
        "configurations": [
            {"algorithm": "kmeans", "reduction": "none"},
            {"algorithm": "agglomerative", "reduction": "pca"},
            {"algorithm": "dbstream", "reduction": "pca"},
        ],
    }
