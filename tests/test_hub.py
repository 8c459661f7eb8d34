"""Prefetch without the hub: offline copy from a local HF cache, skip, validation, error messages."""

import pytest

from tecb.embed import hub

COMMIT = "a" * 40


def fake_cache(root, repo="org/model", commit=COMMIT):
    repo_dir = root / f"models--{repo.replace('/', '--')}"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    snap = repo_dir / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"model_type": "bert"}')
    return root


def test_offline_copies_snapshot_and_records_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = fake_cache(tmp_path / "cache")
    out = tmp_path / "resources" / "models" / "m"
    assert hub.prefetch_model("org/model", out, log=lambda *a: None, cache_dir=cache) == COMMIT
    assert (out / "config.json").read_text() == '{"model_type": "bert"}'
    assert hub.recorded_commit(out) == COMMIT
    assert [p.name for p in out.parent.iterdir()] == ["m"]  # no temporary directory left


def test_offline_missing_model_fails_clearly_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "models" / "m"
    with pytest.raises(RuntimeError, match=r"prefetch of org/other@main failed.*login node"):
        hub.prefetch_model("org/other", out, log=lambda *a: None, cache_dir=fake_cache(tmp_path / "c"))
    assert not out.exists() and (not out.parent.exists() or list(out.parent.iterdir()) == [])


def test_existing_commit_is_not_fetched_again(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    out = tmp_path / "m"
    out.mkdir()
    (out / hub.REVISION_FILE).write_text(COMMIT + "\n")
    monkeypatch.setattr(hub, "_download", lambda *a: pytest.fail("must not download"))
    assert hub.prefetch_model("org/model", out, revision=COMMIT, log=lambda *a: None) == COMMIT


def test_online_errors_name_model_but_no_secret(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)

    def boom(*args):
        raise OSError("401 for token hf_SECRETSECRET")

    monkeypatch.setattr(hub, "_download", boom)
    with pytest.raises(RuntimeError) as info:
        hub.prefetch_model("deepset/gbert-base", tmp_path / "m", revision="v1", log=lambda *a: None)
    assert "deepset/gbert-base@v1" in str(info.value) and "hf_SECRET" not in str(info.value)


@pytest.mark.parametrize("bad", ["", "a/b/c", "has space/x", "../etc"])
def test_bad_ids_rejected(tmp_path, bad):
    with pytest.raises(ValueError, match="not a Hugging Face id"):
        hub.prefetch_model(bad, tmp_path / "m", log=lambda *a: None)


# --- remote code in other repositories (auto_map "owner/repo--module.Class") -----------------------------

CODE_COMMIT = "c" * 40
TOK_COMMIT = "d" * 40
CONFIG_PY = (
    "from transformers import PretrainedConfig\n\n\nclass FakeConfig(PretrainedConfig):\n    model_type = 'fake'\n"
)
MODELING_PY = (
    "from transformers import PreTrainedModel\n\nfrom .configuration_fake import FakeConfig\n\n\n"
    "class FakeModel(PreTrainedModel):\n    config_class = FakeConfig\n"
)


def _write_json(path, data):
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def remote_code_model(folder):
    """A model folder naming code in two other repos: config auto_map (plain strings), the tokenizer's
    [slow, fast] list with a null, a sentence-transformers module type, and a reference into itself."""
    _write_json(
        folder / "config.json",
        {
            "model_type": "fake",
            "auto_map": {
                "AutoConfig": "org/code--configuration_fake.FakeConfig",
                "AutoModel": "org/code--modeling_fake.FakeModel",
            },
        },
    )
    _write_json(
        folder / "tokenizer_config.json",
        {"auto_map": {"AutoTokenizer": ["org/tok--tokenization_fake.FakeTokenizer", None]}},
    )
    _write_json(
        folder / "modules.json",
        [
            {"idx": 0, "name": "0", "path": "", "type": "custom_st.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Dense", "type": "org/st-code--dense_fake.Dense"},
        ],
    )
    _write_json(folder / "1_Pooling" / "config.json", {"pooling_mode_mean_tokens": True})
    _write_json(
        folder / "2_Dense" / "config.json", {"auto_map": {"AutoConfig": "org/code--configuration_fake.FakeConfig"}}
    )
    (folder / "custom_st.py").write_text("# the model's own module\n")
    return folder


def test_remote_code_references_found_in_every_config_format(tmp_path):
    model = remote_code_model(tmp_path / "m")
    refs = hub.remote_code_references(model)
    assert list(refs) == ["org/code", "org/st-code", "org/tok"]  # files in sorted order, module folders last
    assert refs["org/code"] == [
        "config.json: auto_map.AutoConfig",
        "config.json: auto_map.AutoModel",
        "2_Dense/config.json: auto_map.AutoConfig",
    ]
    assert refs["org/tok"] == ["tokenizer_config.json: auto_map.AutoTokenizer"]
    assert refs["org/st-code"] == ["modules.json: 2.type"]
    assert hub.split_reference("modeling_x.Outer") == (None, "modeling_x.Outer")
    assert hub.split_reference("jinaai/xlm-roberta-flash-implementation--modeling_lora.XLMRobertaLoRA") == (
        "jinaai/xlm-roberta-flash-implementation",
        "modeling_lora.XLMRobertaLoRA",
    )
    with pytest.raises(ValueError, match="not a remote-code reference"):
        hub.split_reference("a/b/c--m.C")


def test_no_auto_map_means_no_remote_code(tmp_path):
    _write_json(tmp_path / "config.json", {"model_type": "bert"})
    (tmp_path / "vocab.json").write_text("not json {")
    assert hub.remote_code_references(tmp_path) == {}
    assert hub.vendor_remote_code(tmp_path, lambda *a: pytest.fail("nothing to fetch")) == {}
    assert not (tmp_path / hub.REMOTE_CODE_FILE).exists()


def test_vendor_copies_code_pins_revisions_and_rewrites_references(tmp_path):
    import json

    model = remote_code_model(tmp_path / "m")
    repos = {
        "org/code": {"configuration_fake.py": CONFIG_PY, "modeling_fake.py": MODELING_PY},
        "org/tok": {"tokenization_fake.py": "# tokenizer\n"},
        "org/st-code": {"dense_fake.py": "# dense\n"},
    }
    asked = []

    def fetch(repo, revision):
        asked.append((repo, revision))
        folder = tmp_path / "hub" / repo
        for name, text in repos[repo].items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        return folder, CODE_COMMIT

    record = hub.vendor_remote_code(model, fetch, code_revisions={"org/tok": "v2"}, log=lambda *a: None)
    assert asked == [("org/code", None), ("org/st-code", None), ("org/tok", "v2")]
    assert (model / "modeling_fake.py").read_text() == MODELING_PY and (model / "dense_fake.py").exists()
    config = json.loads((model / "config.json").read_text())
    assert config["auto_map"] == {"AutoConfig": "configuration_fake.FakeConfig", "AutoModel": "modeling_fake.FakeModel"}
    tok = json.loads((model / "tokenizer_config.json").read_text())
    assert tok["auto_map"]["AutoTokenizer"] == ["tokenization_fake.FakeTokenizer", None]
    assert json.loads((model / "modules.json").read_text())[2]["type"] == "dense_fake.Dense"
    assert hub.remote_code_references(model) == {}  # nothing left to fetch at load time
    saved = json.loads((model / hub.REMOTE_CODE_FILE).read_text())
    assert saved == record and saved["repositories"]["org/tok"]["requested"] == "v2"
    assert saved["repositories"]["org/code"]["commit"] == CODE_COMMIT
    assert saved["rewritten"]["config.json"]["auto_map.AutoModel"] == [
        "org/code--modeling_fake.FakeModel",
        "modeling_fake.FakeModel",
    ]
    with pytest.raises(ValueError, match="code_revisions names.*org/other"):
        hub.vendor_remote_code(remote_code_model(tmp_path / "m2"), fetch, code_revisions={"org/other": "x"})


def test_vendor_refuses_a_module_that_would_replace_the_models_own(tmp_path):
    model = remote_code_model(tmp_path / "m")
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "custom_st.py").write_text("# another module of the same name\n")
    with pytest.raises(ValueError, match="custom_st.py differs.*model's own repository"):
        hub.vendor_remote_code(model, lambda repo, rev: (folder, CODE_COMMIT), log=lambda *a: None)


def _cache_repo(cache, repo, commit, files):
    repo_dir = cache / f"models--{repo.replace('/', '--')}"
    (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
    (repo_dir / "refs" / "main").write_text(commit)
    snap = repo_dir / "snapshots" / commit
    for name, text in files.items():
        (snap / name).parent.mkdir(parents=True, exist_ok=True)
        (snap / name).write_text(text)


@pytest.mark.slow  # transformers loads a model with remote code (~4.5 CPU-s)
def test_offline_prefetch_vendors_remote_code_and_transformers_loads_it_without_the_hub(tmp_path, monkeypatch):
    """A fake hub cache: the model names its config and model classes in `org/code`; after the prefetch,
    transformers loads both classes from the model folder offline, with an empty Hugging Face cache."""
    import json
    import os
    import subprocess
    import sys

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp_path / "cache"
    _cache_repo(
        cache,
        "org/model",
        COMMIT,
        {
            "config.json": json.dumps(
                {
                    "model_type": "fake",
                    "auto_map": {
                        "AutoConfig": "org/code--configuration_fake.FakeConfig",
                        "AutoModel": "org/code--modeling_fake.FakeModel",
                    },
                }
            )
        },
    )
    _cache_repo(
        cache,
        "org/code",
        CODE_COMMIT,
        {"configuration_fake.py": CONFIG_PY, "modeling_fake.py": MODELING_PY, "README.md": "code only"},
    )
    out = tmp_path / "resources" / "models" / "m"
    assert hub.prefetch_model("org/model", out, log=lambda *a: None, cache_dir=cache) == COMMIT
    assert json.loads((out / hub.REMOTE_CODE_FILE).read_text())["repositories"]["org/code"]["commit"] == CODE_COMMIT
    assert not (out / "README.md").exists()  # only the code repository's modules
    code = (
        "import sys; from transformers import AutoConfig; "
        "from transformers.dynamic_module_utils import get_class_from_dynamic_module as get; "
        "c = AutoConfig.from_pretrained(sys.argv[1], trust_remote_code=True); "
        "m = get(c.auto_map['AutoModel'], sys.argv[1]); "
        "print(type(c).__name__, m.__name__, m.config_class.__name__)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "empty-hf-home")}
    run = subprocess.run([sys.executable, "-c", code, str(out)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["FakeConfig", "FakeModel", "FakeConfig"]
    # a code repository missing from the cache: the prefetch fails naming the model, and writes nothing
    _cache_repo(
        cache, "org/model2", COMMIT, {"config.json": json.dumps({"auto_map": {"AutoModel": "org/missing--modeling.M"}})}
    )
    with pytest.raises(RuntimeError, match=r"prefetch of org/model2@main failed"):
        hub.prefetch_model("org/model2", tmp_path / "m2", log=lambda *a: None, cache_dir=cache)
    assert not (tmp_path / "m2").exists()


def test_prefetched_folder_with_unvendored_remote_code_is_fetched_again(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    out = remote_code_model(tmp_path / "m")
    (out / hub.REVISION_FILE).write_text(COMMIT + "\n")  # prefetched by a version that did not vendor
    calls = []
    monkeypatch.setattr(hub, "_download", lambda *a: calls.append(a) or COMMIT)
    hub.prefetch_model("org/model", out, revision=COMMIT, log=lambda *a: None)
    assert len(calls) == 1
