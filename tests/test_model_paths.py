"""Every model kind's paths and names are checked before any job, in one place (tecb.preflight), so that
``python -m tecb.configcheck`` and the workflow give the same verdict: one wrong path (or name) per kind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import copy_project, run_snakemake

from tecb.config import ConfigError
from tecb.configcheck import check_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"

#: model entry -> fragments its message must hold (the key first): one wrong path or name per kind
WRONG = {
    "local": (
        {"kind": "local", "path": "models/no-such-folder"},
        ["models.m.path", "no-such-folder", "does not exist"],
    ),
    "mteb": (
        {"kind": "mteb", "name": MINILM, "path": "models/no-such-minilm", "task": {"Mine": "TenKGnadClusteringS2S"}},
        ["models.m.path", "no-such-minilm", "does not exist", "remove `path`"],
    ),
    "static": ({"kind": "static", "path": "models/no-such-static"}, ["models.m.path", "no-such-static", "does not"]),
    "static distilled": (
        {"kind": "static", "distill_from": "models/no-such-source"},
        ["models.m.distill_from", "no-such-source", "does not exist"],
    ),
    "precomputed": ({"kind": "precomputed", "path": "no-such-vectors.parquet"}, ["models.m.path", "does not exist"]),
    "precomputed texts": (
        {"kind": "precomputed", "path": "data/mine.tsv", "texts": "no-such-texts.parquet"},
        ["models.m.texts", "no-such-texts.parquet", "does not exist"],
    ),
    "precomputed folder": ({"kind": "precomputed", "path": "data"}, ["models.m.path", "is a folder"]),
    "huggingface": ({"id": "/home/me/my-model"}, ["models.m.id", "not a Hugging Face id", "kind: local"]),
    "python": ({"kind": "python", "object": "no_such_pkg_xyz:Encoder"}, ["models.m.object", "cannot import module"]),
}


def _config(tmp: Path, model: dict) -> dict:
    (tmp / "data").mkdir(exist_ok=True)
    rows = "".join(f"Satz {i} über {'Sport' if i % 2 else 'Kultur'}\t{'s' if i % 2 else 'k'}\n" for i in range(12))
    (tmp / "data" / "mine.tsv").write_text("text\tlabel\n" + rows)
    return {
        "run": "paths",
        "sources": {"mine": {"builder": "custom", "path": "data/mine.tsv"}},
        "datasets": {"Mine": {"source": "mine", "text_column": "text", "label_column": "label", "n_splits": 2}},
        "models": {"tfidf": {"kind": "tfidf", "dim": 8}, "m": model},
        "algorithms": {"kmeans": {"method": "minibatch_kmeans"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
    }


@pytest.mark.parametrize("case", list(WRONG))
def test_a_wrong_path_or_name_of_every_kind_is_named_before_any_job(tmp_path, monkeypatch, case):
    monkeypatch.chdir(tmp_path)
    model, fragments = WRONG[case]
    with pytest.raises(ConfigError, match="before any job") as caught:
        check_config(_config(tmp_path, model), SCHEMA, cache_dir=None)
    message = str(caught.value)
    assert all(f in message for f in fragments), message
    assert message.index(fragments[0]) < message.index(fragments[-1]), message


def test_right_paths_of_every_kind_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "static").mkdir(parents=True)
    (tmp_path / "models" / "static" / "config.json").write_text("{}")
    (tmp_path / "vectors.parquet").write_bytes(b"PAR1")
    config = _config(tmp_path, {"kind": "static", "path": "models/static"})
    config["models"].update(
        pre={"kind": "precomputed", "path": "vectors.parquet"},
        distilled={"kind": "static", "distill_from": "models/static"},
        hub={"id": "org/model"},
        py={"kind": "python", "object": "sklearn.feature_extraction.text:HashingVectorizer"},
    )
    check_config(config, SCHEMA, cache_dir=None)
    # a distill_from naming a model key must name a transformer
    config["models"]["distilled"] = {"kind": "static", "distill_from": "tfidf"}
    with pytest.raises(ConfigError, match=r"models\.distilled\.distill_from: 'tfidf' is a model of kind tfidf"):
        check_config(config, SCHEMA, cache_dir=None)


@pytest.mark.workflow
def test_configcheck_and_the_workflow_give_the_same_verdict(tmp_path):
    """All wrong entries in one config: both name every one of them, the workflow before any job."""
    work = copy_project(tmp_path / "project")
    config = _config(work, {"kind": "tfidf", "dim": 4})
    config["models"] = {"tfidf": {"kind": "tfidf", "dim": 8}}
    config["models"].update({f"m{i}": WRONG[case][0] for i, case in enumerate(WRONG)})
    (work / "wrong.yaml").write_text(yaml.safe_dump(config))
    cli = subprocess.run(
        [sys.executable, "-m", "tecb.configcheck", "wrong.yaml"], cwd=work, capture_output=True, text=True
    )
    flow = run_snakemake(work, "--configfile", "wrong.yaml", "-n", check=False)
    assert cli.returncode == 1 and flow.returncode != 0
    for i, case in enumerate(WRONG):
        first = WRONG[case][1][0].replace("models.m.", f"models.m{i}.")
        assert first in cli.stderr, (case, cli.stderr)
        assert first in flow.stdout, (case, flow.stdout[-4000:])
    problems = [line.strip() for line in cli.stderr.splitlines() if line.strip().startswith("models.")]
    assert len(problems) == len(WRONG) and all(p in flow.stdout for p in problems)
    assert "Exception" not in flow.stdout and "Traceback" not in flow.stdout, flow.stdout[-4000:]
