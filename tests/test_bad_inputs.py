"""Bad inputs and configs: one table of broken cases, each with the stage it must stop at and a fragment of the
message it must give (docs/reliability.md lists what is checked when).

Every case here is seen *before any job*: by ``tecb.configcheck.check_config`` (the schema, keys and parameters,
then the preflight of the files, local models and import-path algorithms the config points to), exactly what the
Snakefile runs at startup and ``python -m tecb.configcheck`` runs by hand, or by ``tecb.config.load_yaml`` for YAML
files. Library calls only (the fast lane); the few cases that need a Snakemake run are in
tests/test_bad_inputs_workflow.py. Every message must also name the config key it is about.
"""

from __future__ import annotations

import copy
import gzip
import json
import sqlite3
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tecb.config import ConfigError, layered_config, load_yaml
from tecb.configcheck import check_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
BEFORE_ANY_JOB = "before any job"
SECRET = "s3cr3t-VALUE-never-shown"

GOOD_TSV = "text\tlabel\tfold\n" + "".join(
    f"Satz Nummer {i} über {'Sport' if i % 2 else 'Kultur'}\t{'sport' if i % 2 else 'kultur'}\t{1 if i < 6 else 2}\n"
    for i in range(12)
)


def base_config() -> dict:
    return {
        "run": "bad",
        "sources": {"mine": {"builder": "custom", "path": "data/mine.tsv"}},
        "datasets": {"Mine": {"source": "mine", "text_column": "text", "label_column": "label", "n_splits": 2}},
        "models": {"tfidf": {"name": "TF-IDF", "kind": "tfidf", "dim": 8}},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


def with_file(name: str, data, **dataset):
    """A case: the custom source points to ``data/<name>`` holding ``data``; ``dataset`` changes the entry."""

    def make(tmp: Path, cfg: dict) -> dict:
        write(tmp / "data" / name, data(tmp) if callable(data) else data)
        cfg["sources"]["mine"]["path"] = f"data/{name}"
        cfg["datasets"]["Mine"].update(dataset)
        for key in [k for k, v in dataset.items() if v is None]:
            del cfg["datasets"]["Mine"][key]
        return cfg

    return make


def change(mutate):
    """A case that only edits the config (the good TSV in place)."""

    def make(tmp: Path, cfg: dict) -> dict:
        mutate(cfg)
        return cfg

    return make


def parquet_bytes(tmp: Path, frame: pd.DataFrame) -> bytes:
    p = tmp / "frame.parquet"
    frame.to_parquet(p)
    return p.read_bytes()


GOOD_FRAME = pd.DataFrame({"text": [f"Text {i}" for i in range(8)], "label": ["a", "b"] * 4})


# --- raw sources of the paper's builders ---------------------------------------------------------------------


def germeval(kind: str):
    def make(tmp: Path, cfg: dict) -> dict:
        from tecb.data.demo import write_germeval_zip

        good = write_germeval_zip(tmp / "good.zip", books_per_genre=3, seed=42)
        target = tmp / "data" / "germeval.zip"
        target.parent.mkdir(parents=True, exist_ok=True)
        raw = good.read_bytes()
        if kind == "truncated":
            target.write_bytes(raw[: len(raw) // 2])
        elif kind == "random":
            target.write_bytes(bytes(range(256)) * 8)
        elif kind == "no blurbs":
            with zipfile.ZipFile(target, "w") as zf:
                zf.writestr("readme.txt", "nothing here")
        elif kind == "empty folder":
            target = tmp / "data" / "germeval"
            target.mkdir()
            write(target / "hierarchy.txt", "Literatur\n")
        elif kind in ("latin1", "gz truncated", "unlabelled"):
            target = tmp / "data" / "germeval"
            target.mkdir()
            with zipfile.ZipFile(good) as zf:
                text = zf.read(next(n for n in zf.namelist() if n.endswith("blurbs_train.txt")))
            if kind == "latin1":
                write(
                    target / "blurbs_train.txt",
                    text.decode("utf-8").encode("latin-1", "replace") + "Straße".encode("latin-1"),
                )
            elif kind == "gz truncated":
                write(target / "blurbs_train.txt.gz", gzip.compress(text)[:-40])
            else:
                import re

                write(target / "blurbs_train.txt", re.sub(rb"<categories>.*?</categories>", b"", text, flags=re.S))
        cfg["sources"] = {"germeval2019": {"path": str(target.relative_to(tmp))}}
        cfg["datasets"] = {"BlurbsClusteringS2S": {"source": "germeval2019", "text": "s2s"}}
        return cfg

    return make


def million_posts(kind: str):
    def make(tmp: Path, cfg: dict) -> dict:
        target = tmp / "data" / "corpus.sqlite3"
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "not sqlite":
            target.write_text("this is a text file, not a database\n")
        elif kind == "no table":
            con = sqlite3.connect(target)
            con.execute("CREATE TABLE Posts (ID_Post INTEGER)")
            con.commit()
            con.close()
        elif kind == "no column":
            con = sqlite3.connect(target)
            con.execute("CREATE TABLE Articles (ID_Article INTEGER, Path TEXT, Title TEXT)")
            con.commit()
            con.close()
        elif kind == "folder":
            target = tmp / "data" / "million_post_corpus"
            target.mkdir()
        cfg["sources"] = {"million_posts": {"path": str(target.relative_to(tmp))}}
        cfg["datasets"] = {"TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s"}}
        return cfg

    return make


def gnad_csv(kind: str):
    def make(tmp: Path, cfg: dict) -> dict:
        folder = tmp / "data" / "10kGNAD"
        folder.mkdir(parents=True)
        rows = "".join(f"{'Sport' if i % 2 else 'Web'};'Ein Artikel Nummer {i}'\n" for i in range(6))
        if kind == "latin1":
            write(folder / "train.csv", (rows + "Web;'Größe'\n").encode("latin-1"))
        elif kind == "fields":
            write(folder / "train.csv", rows + "Web;'a';'b'\n")
        elif kind == "empty label":
            write(folder / "train.csv", rows + ";'kein Label'\n")
        write(folder / "test.csv", rows)
        paths = [f"data/10kGNAD/{n}" for n in ("train.csv", "test.csv")]
        if kind == "missing":
            paths[1] = "data/10kGNAD/tset.csv"
        cfg["sources"] = {"10kgnad": {"builder": "10kgnad_csv", "path": paths}}
        cfg["datasets"] = {"TenKGnadClusteringP2P": {"source": "10kgnad", "text": "p2p"}}
        return cfg

    return make


def reddit(kind: str):
    def make(tmp: Path, cfg: dict) -> dict:
        target = tmp / "data" / "submissions.parquet"
        if kind == "schema":
            write(target, parquet_bytes(tmp, pd.DataFrame({"id": ["a1"], "title": ["t"], "selftext": [""]})))
        else:
            write(target, b"PAR1" + bytes(200))
        cfg["sources"] = {"reddit": {"path": "data/submissions.parquet"}}
        cfg["datasets"] = {"RedditClusteringS2S": {"source": "reddit", "text": "s2s"}}
        return cfg

    return make


def published(content: str):
    def make(tmp: Path, cfg: dict) -> dict:
        write(tmp / "data" / "test.jsonl", content)
        cfg["sources"] = {"mine_published": {"builder": "published", "path": "data/test.jsonl"}}
        cfg["datasets"] = {"Pub": {"source": "mine_published"}}
        return cfg

    return make


# --- local models ---------------------------------------------------------------------------------------------

BERT_CONFIG = {
    "model_type": "bert",
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "vocab_size": 100,
}


def safetensors_bytes(truncate: bool = False) -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    data = len(header).to_bytes(8, "little") + header + bytes(16)
    return data[:-6] if truncate else data


def local_model(kind: str):
    def make(tmp: Path, cfg: dict) -> dict:
        folder = tmp / "models" / "mine"
        config = dict(BERT_CONFIG)
        weights = safetensors_bytes()
        if kind == "hidden_size":
            config["hidden_size"] = "abc"
        if kind == "layers float":
            config["num_hidden_layers"] = 2.5
        if kind == "no model_type":
            del config["model_type"]
        if kind == "truncated weights":
            weights = safetensors_bytes(truncate=True)
        if kind == "empty weights":
            weights = b""
        if kind == "random weights":
            weights = bytes(range(200))
        if kind != "missing folder":
            folder.mkdir(parents=True)
            if kind not in ("no config",):
                write(folder / "config.json", "{not json" if kind == "bad json" else json.dumps(config))
            if kind not in ("no weights",):
                write(folder / ("pytorch_model.bin" if kind == "empty weights" else "model.safetensors"), weights)
        path = "models/mine"
        if kind == "a file":
            path = "models/mine/config.json"
        if kind == "st module":
            write(
                folder / "modules.json",
                json.dumps(
                    [
                        {
                            "idx": 0,
                            "name": "0",
                            "path": "0_Transformer",
                            "type": "sentence_transformers.models.Transformer",
                        }
                    ]
                ),
            )
            write(folder / "0_Transformer" / "config.json", json.dumps(BERT_CONFIG))
            (folder / "model.safetensors").unlink()
        cfg["models"]["mine"] = {"name": "Mine", "kind": "local", "path": path}
        return cfg

    return make


def algorithm(method: str, **params):
    def mutate(cfg):
        cfg["algorithms"]["mine"] = {"method": method, **({"params": params} if params else {})}
        cfg["configurations"].append({"algorithm": "mine", "reduction": "none"})

    return change(mutate)


def model(**entry):
    def mutate(cfg):
        cfg["models"]["m"] = entry

    return change(mutate)


def put(dotted: str, value):
    def mutate(cfg):
        node = cfg
        keys = dotted.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value

    return change(mutate)


def yaml_text(text: str):
    return ("yaml", text)


# (case id, how to break it, expected stage, fragments of the message: all must appear)
CASES = [
    # --- custom files: columns, format, encoding, records ---------------------------------------------------
    (
        "text_column not in file",
        with_file("mine.tsv", GOOD_TSV, text_column="sentence"),
        ["datasets.Mine", "data/mine.tsv", "no column 'sentence'", "text_column"],
    ),
    (
        "label_column not in file",
        with_file("mine.tsv", GOOD_TSV, label_column="topic"),
        ["datasets.Mine", "no column 'topic'", "label_column"],
    ),
    (
        "split_column not in file",
        with_file("mine.tsv", GOOD_TSV, split_column="fold2", n_splits=None),
        ["datasets.Mine", "no column 'fold2'", "split_column"],
    ),
    (
        "latin-1 tsv",
        with_file("mine.tsv", GOOD_TSV.replace("über", "Größe").encode("latin-1")),
        ["datasets.Mine", "data/mine.tsv", "not UTF-8", "iconv"],
    ),
    (
        "windows-1252 quotes",
        with_file("mine.tsv", "text\tlabel\n\u201eZitat\u201c eins\ta\nzwei\tb\n".encode("cp1252")),
        ["datasets.Mine", "not UTF-8"],
    ),
    ("utf-16 file", with_file("mine.tsv", GOOD_TSV.encode("utf-16")), ["datasets.Mine", "not UTF-8"]),
    (
        "semicolon csv without sep",
        with_file("mine.csv", "text;label\neins;a\nzwei;b\n"),
        ["datasets.Mine", "data/mine.csv", 'sep: ";"'],
    ),
    (
        "row with extra field",
        with_file("mine.tsv", GOOD_TSV + "zu\tviele\tfelder\there\n"),
        ["datasets.Mine", "line 14", "fields, the header has 3"],
    ),
    (
        "broken quoted field",
        with_file("mine.csv", 'text,label\n"offen,a\nzwei,b\n'),
        ["datasets.Mine", "quoting: none"],
    ),
    ("empty file", with_file("mine.tsv", ""), ["datasets.Mine", "no header line"]),
    ("header only", with_file("mine.tsv", "text\tlabel\n"), ["datasets.Mine", "no records"]),
    (
        "one label dataset",
        with_file("mine.tsv", "text\tlabel\neins\ta\nzwei\ta\ndrei\ta\n"),
        ["datasets.Mine", "1 distinct label", "at least two"],
    ),
    (
        "one-label split",
        with_file(
            "mine.tsv", GOOD_TSV + "noch einer\tsport\t3\nund einer\tsport\t3\n", split_column="fold", n_splits=None
        ),
        ["datasets.Mine", "split fold='3'", "at least two"],
    ),
    (
        "one-record split",
        with_file("mine.tsv", GOOD_TSV + "allein\tsport\t3\n", split_column="fold", n_splits=None),
        ["datasets.Mine", "split fold='3' has 1 record"],
    ),
    (
        "literal NaN label",
        with_file("mine.tsv", "text\tlabel\neins\ta\nzwei\tNaN\ndrei\tb\n"),
        ["datasets.Mine", "record 2", "'NaN'", "missing value"],
    ),
    (
        "lowercase nan label",
        with_file("mine.csv", "text,label\neins,a\nzwei,nan\ndrei,b\n"),
        ["datasets.Mine", "'nan'", "missing value"],
    ),
    (
        "empty text field",
        with_file("mine.tsv", "text\tlabel\neins\ta\n\tb\n"),
        ["datasets.Mine", "record 2", "field 'text' is empty"],
    ),
    (
        "empty label field",
        with_file("mine.tsv", "text\tlabel\neins\ta\nzwei\t\n"),
        ["datasets.Mine", "field 'label' is empty"],
    ),
    (
        "label 1 and 1.0",
        with_file("mine.tsv", "text\tlabel\neins\t1\nzwei\t1.0\ndrei\t2\n"),
        ["datasets.Mine", "written two ways"],
    ),
    (
        "jsonl broken line",
        with_file("mine.jsonl", '{"text": "a", "label": "x"}\n{"text": "b", "label": \n'),
        ["datasets.Mine", "line 2", "not valid JSON"],
    ),
    (
        "jsonl array line",
        with_file("mine.jsonl", '{"text": "a", "label": "x"}\n["b", "y"]\n'),
        ["datasets.Mine", "line 2", "expected a JSON object"],
    ),
    (
        "jsonl boolean label",
        with_file("mine.jsonl", '{"text": "a", "label": true}\n{"text": "b", "label": "y"}\n'),
        ["datasets.Mine", "boolean"],
    ),
    (
        "jsonl list text",
        with_file("mine.jsonl", '{"text": ["a"], "label": "x"}\n{"text": "b", "label": "y"}\n'),
        ["datasets.Mine", "field 'text' is a list"],
    ),
    (
        "parquet truncated",
        with_file("mine.parquet", lambda tmp: parquet_bytes(tmp, GOOD_FRAME)[:-30]),
        ["datasets.Mine", "data/mine.parquet", "cannot read as parquet"],
    ),
    (
        "parquet random bytes",
        with_file("mine.parquet", bytes(range(256)) * 4),
        ["datasets.Mine", "cannot read as parquet"],
    ),
    (
        "parquet without the label column",
        with_file("mine.parquet", lambda tmp: parquet_bytes(tmp, GOOD_FRAME.rename(columns={"label": "klasse"}))),
        ["datasets.Mine", "no column 'label'", "label_column"],
    ),
    (
        "parquet NaN label",
        with_file("mine.parquet", lambda tmp: parquet_bytes(tmp, GOOD_FRAME.assign(label=["a", None] * 4))),
        ["datasets.Mine", "field 'label' is empty"],
    ),
    (
        "gzip tsv truncated",
        with_file("mine.tsv.gz", gzip.compress(GOOD_TSV.encode())[:-20]),
        ["datasets.Mine", "truncated or corrupt gzip"],
    ),
    ("unknown suffix", with_file("mine.txt", GOOD_TSV), ["datasets.Mine", "unknown format", "format: tsv"]),
    (
        "custom path is a folder",
        change(lambda cfg: cfg["sources"]["mine"].update(path="data")),
        ["datasets.Mine", "is a folder"],
    ),
    (
        "missing custom file",
        change(lambda cfg: cfg["sources"]["mine"].update(path="data/mine.csv")),
        ["sources.mine.path", "data/mine.csv", "does not exist", "fix the path"],
    ),
    (
        "custom file without builder",
        change(lambda cfg: cfg["sources"]["mine"].pop("builder")),
        ["sources.mine", "builder: custom", "datasets.Mine"],
    ),
    # --- GermEval 2019 -----------------------------------------------------------------------------------------
    (
        "germeval zip truncated",
        germeval("truncated"),
        ["sources.germeval2019.path", "germeval.zip", "truncated or corrupt zip"],
    ),
    ("germeval zip random bytes", germeval("random"), ["sources.germeval2019.path", "germeval.zip"]),
    ("germeval zip without blurbs", germeval("no blurbs"), ["sources.germeval2019.path", "no blurbs file"]),
    ("germeval folder without blurbs", germeval("empty folder"), ["sources.germeval2019.path", "no blurbs file"]),
    ("germeval latin-1 blurbs", germeval("latin1"), ["sources.germeval2019.path", "blurbs_train.txt", "not UTF-8"]),
    ("germeval gzip truncated", germeval("gz truncated"), ["sources.germeval2019.path", "truncated or corrupt gzip"]),
    ("germeval without labels", germeval("unlabelled"), ["sources.germeval2019.path", "no labelled books"]),
    # --- One Million Posts, 10kGNAD, Reddit, published splits ------------------------------------------------------
    (
        "sqlite not a database",
        million_posts("not sqlite"),
        ["sources.million_posts.path", "corpus.sqlite3", "SQLite header"],
    ),
    ("sqlite without Articles", million_posts("no table"), ["sources.million_posts.path", "table Articles"]),
    (
        "sqlite Articles without Body",
        million_posts("no column"),
        ["sources.million_posts.path", "table Articles", "Body"],
    ),
    ("sqlite path is a folder", million_posts("folder"), ["sources.million_posts.path", "is a folder"]),
    ("10kgnad latin-1", gnad_csv("latin1"), ["sources.10kgnad.path", "train.csv", "not UTF-8"]),
    ("10kgnad three fields", gnad_csv("fields"), ["sources.10kgnad.path", "train.csv", "expected 2 fields"]),
    ("10kgnad empty label", gnad_csv("empty label"), ["sources.10kgnad.path", "field label is empty"]),
    ("10kgnad missing file", gnad_csv("missing"), ["sources.10kgnad.path", "tset.csv", "does not exist"]),
    ("reddit parquet schema", reddit("schema"), ["sources.reddit.path", "submissions.parquet", "subreddit"]),
    ("reddit parquet damaged", reddit("random"), ["sources.reddit.path", "cannot read as Parquet"]),
    (
        "published length mismatch",
        published('{"sentences": ["a", "b"], "labels": ["x"]}\n'),
        ["sources.mine_published.path", "line 1", "'labels' has 1"],
    ),
    ("published no splits", published("\n\n"), ["sources.mine_published.path", "no splits"]),
    # --- local models ---------------------------------------------------------------------------------------------
    (
        "local model folder missing",
        local_model("missing folder"),
        ["models.mine.path", "models/mine", "does not exist"],
    ),
    ("local model path is a file", local_model("a file"), ["models.mine.path", "is a file"]),
    ("local model without config.json", local_model("no config"), ["models.mine.path", "no config.json"]),
    (
        "local model config.json not JSON",
        local_model("bad json"),
        ["models.mine.path", "config.json", "not valid JSON"],
    ),
    (
        "local model hidden_size abc",
        local_model("hidden_size"),
        ["models.mine.path", "config.json", "'hidden_size' must be an integer"],
    ),
    (
        "local model layers float",
        local_model("layers float"),
        ["models.mine.path", "'num_hidden_layers' must be an integer"],
    ),
    ("local model without model_type", local_model("no model_type"), ["models.mine.path", "'model_type'"]),
    ("local model without weights", local_model("no weights"), ["models.mine.path", "no weights"]),
    ("local model empty weights", local_model("empty weights"), ["models.mine.path", "pytorch_model.bin is empty"]),
    (
        "local model truncated safetensors",
        local_model("truncated weights"),
        ["models.mine.path", "model.safetensors", "truncated"],
    ),
    ("local model random safetensors", local_model("random weights"), ["models.mine.path", "not a safetensors file"]),
    (
        "sentence-transformers model without weights",
        local_model("st module"),
        ["models.mine.path", "0_Transformer", "no weights"],
    ),
    # --- algorithms ---------------------------------------------------------------------------------------------
    (
        "PCA as an algorithm",
        algorithm("sklearn.decomposition.PCA"),
        ["algorithms.mine.method", "sklearn.decomposition.PCA", "not a clusterer"],
    ),
    (
        "StandardScaler as an algorithm",
        algorithm("sklearn.preprocessing.StandardScaler"),
        ["algorithms.mine.method", "not a clusterer"],
    ),
    (
        "n_clusters on an import path",
        algorithm("sklearn.cluster.SpectralClustering", n_clusters=4),
        ["algorithms.mine.params.n_clusters", "set by tecb"],
    ),
    (
        "random_state on an import path",
        algorithm("sklearn.cluster.SpectralClustering", random_state=1),
        ["algorithms.mine.params.random_state", "set by tecb"],
    ),
    (
        "seed on an import path",
        algorithm("sklearn.cluster.Birch", seed=1),
        ["algorithms.mine.params.seed", "set by tecb"],
    ),
    (
        "n_clusters on kmeans",
        put("algorithms.kmeans.params", {"n_clusters": 3}),
        ["algorithms.kmeans.params.n_clusters", "set by tecb"],
    ),
    (
        "kmeans parameter typo",
        put("algorithms.kmeans.params", {"n_int": 3}),
        ["algorithms.kmeans.params.n_int", "did you mean n_init"],
    ),
    ("unknown method name", algorithm("kmeans"), ["algorithms.mine.method"]),
    # --- model keys that do not apply -------------------------------------------------------------------------------
    (
        "prompt on tfidf",
        model(kind="tfidf", dim=8, prompt="query: "),
        ["models.m.prompt", "does not apply to kind", "tfidf"],
    ),
    (
        "model_kwargs on tfidf",
        model(kind="tfidf", model_kwargs={"attn_implementation": "sdpa"}),
        ["models.m.model_kwargs", "does not apply to kind", "tfidf"],
    ),
    ("pooling on tfidf", model(kind="tfidf", pooling="cls"), ["models.m.pooling", "does not apply to kind", "tfidf"]),
    (
        "dim on a hub model",
        model(id="org/model", dim=8),
        ["models.m.dim", "does not apply to kind", "huggingface"],
    ),
    (
        "path on a hub model",
        model(id="org/model", path="models/x"),
        ["models.m.path", "does not apply to kind", "huggingface"],
    ),
    (
        "code_revisions on tiny-bert",
        model(kind="tiny-bert", code_revisions={"a/b": "c"}),
        ["models.m.code_revisions", "does not apply to kind", "tiny-bert"],
    ),
    # --- references between sections (checked by the workflow's .smk files before issue 45) ---------------------
    ("dataset names no source", put("datasets.Mine.source", "absent"), ["datasets.Mine.source", "no key of `sources`"]),
    (
        "dataset key the builder does not take",
        put("datasets.Mine.text", "s2s"),
        ["datasets.Mine.text", "does not apply to builder 'custom'"],
    ),
    ("source key the builder does not take", put("sources.mine.url", "x"), ["sources.mine.url", "does not apply"]),
    (
        "source with nothing to download",
        change(
            lambda cfg: cfg.update(
                sources={"mine": {"builder": "germeval2019"}}, datasets={"Mine": {"source": "mine", "text": "s2s"}}
            )
        ),
        ["sources.mine", "nothing to download"],
    ),
    (
        "configuration names an unknown algorithm",
        put("configurations", [{"algorithm": "absent", "reduction": "none"}]),
        ["(absent, none)", "unknown algorithm"],
    ),
    (
        "configuration names an unknown reduction",
        put("configurations", [{"algorithm": "kmeans", "reduction": "absent"}]),
        ["(kmeans, absent)", "unknown reduction"],
    ),
    (
        "unused algorithm does not import",
        put("algorithms.spare", {"method": "tecb_absent_package.Clusterer"}),
        ["algorithms.spare.method"],
    ),
    ("hub model without id", model(kind="huggingface"), ["models.m", "needs `id`"]),
    ("local model without path", model(kind="local"), ["models.m", "needs `path`"]),
    (
        "unknown prompt variant source",
        model(id="org/model", prompt_variants=["generic"]),
        ["models.m.prompt_variants"],
    ),
    (
        "pretrain model not configured",
        put("pretrain", {"enabled": True, "models": ["absent"], "algorithm": "kmeans"}),
        ["pretrain.models", "'absent'", "not a key of `models`"],
    ),
    (
        "pretrain model is tfidf",
        put("pretrain", {"enabled": True, "models": ["tfidf"], "algorithm": "kmeans"}),
        ["pretrain.models.tfidf", "transformer checkpoint"],
    ),
    (
        "pretrain dataset not configured",
        put("pretrain", {"enabled": True, "models": [], "datasets": ["Absent"], "algorithm": "kmeans"}),
        ["pretrain.datasets", "'Absent'"],
    ),
    (
        "pretrain baseline configuration missing",
        put("pretrain", {"enabled": True, "models": [], "algorithm": "hdbscan"}),
        ["pretrain.algorithm", "(hdbscan, none)"],
    ),
    (
        "adapt model is tfidf",
        put("adapt", {"enabled": True, "models": ["tfidf"], "methods": {"simcse": {}}}),
        ["adapt.models.tfidf", "transformer checkpoint"],
    ),
    (
        "adapt algorithm not configured",
        put("adapt", {"enabled": True, "models": [], "algorithm": "absent", "methods": {"simcse": {}}}),
        ["adapt.algorithm", "not a key of `algorithms`"],
    ),
    (
        "adapt lodo with one dataset",
        put("adapt", {"enabled": True, "models": [], "methods": {"cob": {}}}),
        ["adapt.protocol.supervised", "lodo", "no dataset other than Mine"],
    ),
    (
        "adapt reply without a forum source",
        put(
            "adapt",
            {
                "enabled": True,
                "models": [],
                "methods": {"argue": {}},
                "protocol": {"argue_objectives": ["reply"], "reply_source": "absent"},
            },
        ),
        ["adapt.protocol.argue_objectives", "reply_source"],
    ),
    # --- credentials, in free-form mappings too ------------------------------------------------------------------
    (
        "token in model_kwargs",
        model(id="org/model", model_kwargs={"token": SECRET}),
        ["models.m.model_kwargs.token", "value not shown"],
    ),
    (
        "pass in model_kwargs",
        model(id="org/model", model_kwargs={"pass": SECRET}),
        ["models.m.model_kwargs.pass", "value not shown"],
    ),
    (
        "username in encode_kwargs",
        model(id="org/model", encode_kwargs={"username": SECRET}),
        ["models.m.encode_kwargs.username"],
    ),
    (
        "Authorization header",
        model(id="org/model", tokenizer_kwargs={"headers": {"Authorization": SECRET}}),
        ["tokenizer_kwargs.headers.Authorization"],
    ),
    ("use_auth_token", model(id="org/model", model_kwargs={"use_auth_token": SECRET}), ["model_kwargs.use_auth_token"]),
    (
        "api key in algorithm params",
        algorithm("sklearn.cluster.Birch", api_key=SECRET),
        ["algorithms.mine.params.api_key"],
    ),
    (
        "reddit client_secret",
        put("sources.reddit", {"client_secret": SECRET}),
        ["sources.reddit.client_secret", "praw.ini"],
    ),
    ("password at the top level", put("password", SECRET), ["password", "value not shown"]),
    # --- schema ---------------------------------------------------------------------------------------------------
    ("typo in a top-level key", put("seeed", 1), ["seeed: unknown key", "did you mean seed"]),
    ("seed is a string", put("seed", "abc"), ["seed: expected integer"]),
    ("model name with a slash", change(lambda cfg: cfg["models"].update({"org/m": {"kind": "tfidf"}})), ["models"]),
    # --- YAML files ---------------------------------------------------------------------------------------------
    (
        "YAML bad indentation",
        yaml_text("models:\n  a: {kind: tfidf}\n b: 1\n"),
        ["mine.yaml", "YAML syntax error at line 3"],
    ),
    ("YAML tab indentation", yaml_text("models:\n\ta: 1\n"), ["mine.yaml", "YAML syntax error at line 2"]),
    ("YAML unclosed bracket", yaml_text("models: {a: {kind: tfidf}\n"), ["mine.yaml", "YAML syntax error"]),
    (
        "YAML duplicated model key",
        yaml_text("models:\n  a: {kind: tfidf}\n  a: {kind: tfidf, dim: 8}\n"),
        ["mine.yaml", "line 3", "'a' given twice"],
    ),
    (
        "YAML duplicated dataset key",
        yaml_text("datasets:\n  X: {source: s}\nseed: 1\ndatasets: {}\n"),
        ["mine.yaml", "'datasets' given twice"],
    ),
    ("YAML list at the top", yaml_text("- a\n- b\n"), ["mine.yaml", "holds a mapping"]),
]


def _run_case(tmp_path: Path, monkeypatch, make) -> str:
    """The message the case stops with, before any job (``""`` when nothing objects)."""
    monkeypatch.chdir(tmp_path)
    if isinstance(make, tuple):  # a YAML file
        write(tmp_path / "mine.yaml", make[1])
        try:
            load_yaml(tmp_path / "mine.yaml")
        except ConfigError as err:
            return str(err)
        return ""
    write(tmp_path / "data" / "mine.tsv", GOOD_TSV)
    cfg = make(tmp_path, copy.deepcopy(base_config()))
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    config = layered_config(ROOT, tmp_path, [tmp_path / "mine.yaml"])
    try:
        check_config(config, SCHEMA, cache_dir=None)
    except (ConfigError, ValueError) as err:
        return str(err)
    return ""


def test_the_table_is_large_and_unique():
    assert len(CASES) >= 60
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("make, fragments", [pytest.param(m, f, id=i) for i, m, f in CASES])
def test_stops_before_any_job_naming_key_and_file(tmp_path, monkeypatch, make, fragments):
    message = _run_case(tmp_path, monkeypatch, make)
    assert message, "accepted: nothing objected before any job"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    assert SECRET not in message  # credentials never shown


def test_a_good_config_passes_and_is_cached(tmp_path, monkeypatch):
    """The base config passes; the second check reads no file (the cache knows it by size and mtime), a changed
    file is read again."""
    from tecb import preflight

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "data" / "mine.tsv", GOOD_TSV)
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(base_config()))
    config = layered_config(ROOT, tmp_path, [tmp_path / "mine.yaml"])
    check_config(config, SCHEMA, cache_dir=tmp_path / "cache")
    reads = []
    real = preflight._check_custom
    monkeypatch.setattr(preflight, "_check_custom", lambda *a: reads.append(a) or real(*a))
    check_config(config, SCHEMA, cache_dir=tmp_path / "cache")
    assert reads == []
    write(tmp_path / "data" / "mine.tsv", GOOD_TSV.replace("Sport", "Tennis"))
    check_config(config, SCHEMA, cache_dir=tmp_path / "cache")
    assert len(reads) == 1
    write(tmp_path / "data" / "mine.tsv", "text\tlabel\neins\ta\nzwei\tNaN\n")  # broken: never cached as passed
    with pytest.raises(ConfigError, match="missing value"):
        check_config(config, SCHEMA, cache_dir=tmp_path / "cache")


def test_files_a_rule_writes_may_be_missing(tmp_path, monkeypatch):
    """A source under resources/ (a download, the demo's inputs) is checked once it exists, never downloaded."""
    monkeypatch.chdir(tmp_path)
    cfg = base_config()
    cfg["sources"] = {"million_posts": {"path": "resources/demo/corpus.sqlite3"}}
    cfg["datasets"] = {"TenKGnadClusteringS2S": {"source": "million_posts", "text": "s2s"}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(cfg))
    config = layered_config(ROOT, tmp_path, [tmp_path / "mine.yaml"])
    check_config(config, SCHEMA, cache_dir=None)
    write(tmp_path / "resources" / "demo" / "corpus.sqlite3", "not a database")
    with pytest.raises(ConfigError, match="SQLite header"):
        check_config(config, SCHEMA, cache_dir=None)


def test_a_good_local_model_and_clusterer_pass(tmp_path, monkeypatch):
    from tecb.preflight import check_clusterer, check_local_model

    folder = tmp_path / "m"
    write(folder / "config.json", json.dumps(BERT_CONFIG))
    write(folder / "model.safetensors", safetensors_bytes())
    check_local_model(folder, "models.m.path")
    for method in ("sklearn.cluster.SpectralClustering", "sklearn.cluster.Birch", "sklearn.mixture.GaussianMixture"):
        check_clusterer("a", {"method": method})


def test_unused_inputs_are_not_checked(tmp_path, monkeypatch):
    """Only what the planned run uses: a broken source no dataset names, an algorithm no configuration names."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "data" / "mine.tsv", GOOD_TSV)
    cfg = base_config()
    cfg["sources"]["spare"] = {"builder": "custom", "path": "data/absent.tsv"}
    cfg["algorithms"]["pca"] = {"method": "sklearn.decomposition.PCA"}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(cfg))
    check_config(layered_config(ROOT, tmp_path, [tmp_path / "mine.yaml"]), SCHEMA, cache_dir=None)


def test_the_shipped_configs_pass(tmp_path):
    """config/config.yaml, demo.yaml, modern.yaml, leaderboard-de.yaml and the .test config pass the new key checks
    (no preflight: their files are downloads)."""
    for name in (
        "config/config.yaml",
        "config/demo.yaml",
        "config/modern.yaml",
        "config/leaderboard-de.yaml",
        ".test/config/config.yaml",
    ):
        check_config(layered_config(ROOT, tmp_path, [ROOT / name]), SCHEMA, preflight=False, cache_dir=None)


def test_configcheck_command_runs_the_preflight(tmp_path, monkeypatch, capsys):
    """`python -m tecb.configcheck my.yaml` used to say "config OK" for a column the file does not have."""
    from tecb import configcheck

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "data" / "mine.tsv", GOOD_TSV)
    cfg = base_config()
    cfg["datasets"]["Mine"]["text_column"] = "sentence"
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(cfg))
    assert configcheck.main(["mine.yaml"]) == 1
    err = capsys.readouterr().err
    assert "datasets.Mine" in err and "no column 'sentence'" in err and "data/mine.tsv" in err
    cfg["datasets"]["Mine"]["text_column"] = "text"
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(cfg))
    assert configcheck.main(["mine.yaml"]) == 0
    assert "config OK" in capsys.readouterr().out
    assert (tmp_path / ".snakemake" / "tecb-preflight" / "cache.json").is_file()  # the passed checks, cached


def test_source_fingerprint_follows_content_not_time(tmp_path):
    """The build rule's fingerprint of a user's file: its sha256 (a folder: of its files), cached by size and mtime."""
    import hashlib
    import os

    from tecb.preflight import source_fingerprint

    f = write(tmp_path / "a.tsv", GOOD_TSV)
    cache = tmp_path / "cache"
    assert source_fingerprint(str(f), cache_dir=cache) == {str(f): hashlib.sha256(GOOD_TSV.encode()).hexdigest()}
    st = f.stat()
    write(f, GOOD_TSV.replace("Sport", "Sp0rt"))  # same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))  # older
    assert source_fingerprint(str(f), cache_dir=cache)[str(f)] == hashlib.sha256(f.read_bytes()).hexdigest()
    folder = tmp_path / "blurbs"
    write(folder / "blurbs_train.txt", "x")
    before = source_fingerprint(str(folder), cache_dir=cache)
    st = (folder / "blurbs_train.txt").stat()
    write(folder / "blurbs_train.txt", "y")
    os.utime(folder / "blurbs_train.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a coarse clock's tick
    assert source_fingerprint(str(folder), cache_dir=cache) != before


def _intermediate_files(tmp: Path) -> dict[str, Path]:
    """A real splits, embeddings and reduced file of the workflow's contracts."""
    import numpy as np
    import pyarrow.parquet as pq

    from tecb import io

    texts = [f"t{i}" for i in range(6)]
    io.write_dataset(texts, [([0, 1, 2, 3], ["a", "b", "a", "b"])], tmp / "texts.parquet", tmp / "splits.parquet", "D")
    vectors = np.arange(12, dtype=np.float32).reshape(6, 2)
    schema = io.embedding_schema(2, {"n_texts": 6, io.VECTORS_SHA256: io.vectors_sha256(vectors)})
    pq.write_table(_table(io, schema, vectors), tmp / "emb.parquet")
    io.write_table(io.reduced_table([(0, np.arange(4), vectors[:4])], {}), tmp / "red.parquet")
    return {"splits": tmp / "splits.parquet", "embeddings": tmp / "emb.parquet", "reduced": tmp / "red.parquet"}


def _table(io, schema, vectors):
    import pyarrow as pa

    return pa.Table.from_batches([io.embedding_batch(schema, 0, vectors)])


# (case, which file, how it is damaged, who reads it first)
DAMAGED = [
    (f"{which} {how} in {reader}", which, how, reader)
    for which, reader in [
        ("embeddings", "memory estimate"),
        ("reduced", "memory estimate"),
        ("splits", "memory estimate"),
        ("embeddings", "job reader"),
        ("reduced", "job reader"),
        ("splits", "job reader"),
    ]
    for how in ("truncated", "random bytes")
]


@pytest.mark.parametrize("which, how, reader", [pytest.param(w, h, r, id=c) for c, w, h, r in DAMAGED])
def test_damaged_intermediate_files_are_named_where_first_read(tmp_path, which, how, reader):
    """Stage: wherever first read (the cluster/reduce rules' memory estimates while Snakemake schedules the job,
    else the job's reader), naming the file with "delete it and re-run"."""
    from tecb import io
    from tecb.cluster import algorithms, reduce

    files = _intermediate_files(tmp_path)
    target = files[which]
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2] if how == "truncated" else bytes(range(256)) * 3)
    with pytest.raises(io.ContractError) as err:
        if reader == "memory estimate":
            points = files["reduced"] if which == "reduced" else files["embeddings"]
            algorithms.job_memory_mb("minibatch_kmeans", {}, files["splits"], points)
            reduce.job_memory_mb({"method": "pca", "n_components": 2}, files["splits"], files["embeddings"])
        elif which == "splits":
            algorithms.load_points(files["splits"], embeddings_path=files["embeddings"])
        elif which == "embeddings":
            io.read_embeddings(files["embeddings"])
        else:
            io.read_reduced(files["reduced"])
    assert str(target) in str(err.value) and "delete it and re-run" in str(err.value)
