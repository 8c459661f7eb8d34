"""Prefetch without the hub: offline copy from a local HF cache, skip, validation, error messages."""

import pytest

from tecb import hub

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
