"""Config checks at startup (issue 12 items 6 and 7): credentials refused by key name, no string value ever in a
validation message, method/reduction parameter typos refused naming the key, YAML syntax errors with their line.

The workflow tests plant a credential in a config, run ``snakemake -n`` and grep every file of the project
afterwards (``.snakemake/`` included) and the captured output: the value is only in the config file itself.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake

from tecb import configcheck
from tecb.config import layered_config
from tecb.configcheck import ConfigError

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
PLANTED = "PLANTEDhunter2secret"


def _check(tmp_path, overlay: dict) -> dict:
    """Validate ``overlay`` merged over the defaults, as the Snakefile does."""
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(overlay))
    return configcheck.validated_config(layered_config(ROOT, tmp_path, [path]), SCHEMA)


def _message(tmp_path, overlay: dict) -> str:
    with pytest.raises(ConfigError) as err:
        _check(tmp_path, overlay)
    return str(err.value)


def test_the_schema_loads_as_pyyamls_safe_loader_reads_it_and_each_call_gets_its_own_copy():
    schema = configcheck.load_schema(SCHEMA)
    assert schema == yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))  # libyaml's loader: the same data
    schema["properties"].clear()
    assert configcheck.load_schema(SCHEMA)["properties"]  # the cached parse is never handed out itself


# --- credentials -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overlay, key",
    [
        ({"sources": {"reddit": {"client_secret": PLANTED}}}, "sources.reddit.client_secret"),
        ({"sources": {"reddit": {"password": PLANTED}}}, "sources.reddit.password"),
        (
            {"models": {"m": {"kind": "huggingface", "id": "a/b", "model_kwargs": {"token": PLANTED}}}},
            "models.m.model_kwargs.token",
        ),
        ({"embed": {"hf_api_key": PLANTED}}, "embed.hf_api_key"),
        ({"datasets": {"D": {"source": "s", "praw-client-id": PLANTED}}}, "datasets.D.praw-client-id"),
    ],
)
def test_credential_like_keys_are_refused_naming_the_key_only(tmp_path, overlay, key):
    message = _message(tmp_path, overlay)
    assert key in message and "value not shown" in message
    assert PLANTED not in message and "hunter2" not in message


def test_credential_keys_are_found_at_any_depth_and_in_lists():
    config = {"a": [{"b": {"my_secret": 1}}, {"fine": 2}], "access_token": "x", "tokenizer": "y", "keys": 3}
    assert configcheck.credential_keys(config) == ["a[0].b.my_secret", "access_token"]
    assert not configcheck.looks_like_credential("tokenizer_kwargs")  # words, not substrings


# --- no value in schema messages -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overlay, key",
    [
        ({"seed": PLANTED}, "seed"),  # type error
        ({"run": PLANTED + "/x"}, "run"),  # pattern error
        ({"datasets": {"D": {"source": "million_posts", "text": PLANTED}}}, "datasets.D.text"),  # enum error
        ({"datasets": {"D": {"source": "million_posts", "text": "s2s", "n_splits": PLANTED}}}, "datasets.D.n_splits"),
        ({"sources": {"reddit": {"user_agent": [PLANTED]}}}, "sources.reddit.user_agent"),  # a list
        ({"embed": PLANTED}, "embed"),  # a string where a mapping belongs
        ({"sources": {"reddit": {"app_key": PLANTED}}}, "sources.reddit.app_key"),  # an unknown, innocent key
        ({"tables": {"metrics": [PLANTED]}}, "tables.metrics"),
    ],
)
def test_a_planted_value_under_an_innocent_key_is_never_in_the_message(tmp_path, overlay, key):
    message = _message(tmp_path, overlay)
    assert key in message, message
    assert PLANTED not in message and "hunter2" not in message, message


def test_a_string_is_shown_by_type_and_length_only(tmp_path):
    message = _message(tmp_path, {"seed": "hunter2secret"})
    assert "seed: expected integer, got a string of 13 characters" in message
    assert "hunter2" not in message
    assert "n_splits: expected integer, got 1.5" in _message(
        tmp_path, {"datasets": {"D": {"source": "million_posts", "text": "s2s", "n_splits": 1.5}}}
    )


def test_a_bad_key_name_is_named(tmp_path):
    message = _message(tmp_path, {"datasets": {"bad/name": {"source": "million_posts", "text": "s2s"}}})
    assert "datasets" in message and "'bad/name'" in message


@pytest.mark.parametrize("key, value", [("cache_dir", "resources/embeddings"), ("shard_size", 1000)])
def test_embed_batch_combines_with_a_per_dataset_scheme(tmp_path, key, value):
    """Every combination of the embed switches is served (functions/embed.smk gives each model its writer rule)."""
    _check(tmp_path, {"embed": {"batch": True, key: value}})
    _check(tmp_path, {"embed": {"batch": False, key: value}})
    _check(tmp_path, {"embed": {"batch": True}})


# --- method and reduction parameters ---------------------------------------------------------------------


def test_parameter_typos_are_refused_at_validation_naming_the_key_with_a_suggestion(tmp_path):
    message = _message(
        tmp_path,
        {
            "algorithms": {
                "kmeans": {"method": "minibatch_kmeans", "params": {"n_int": 3, "random_state": 1}},
                "hdbscan": {"method": "hdbscan", "params": {"min_cluster_sise": 5}},
            },
            "reductions": {
                "umap": {"method": "umap", "n_components": 2, "n_neighbours": 15},
                "pca": {"method": "pca", "n_components": 2, "whiten": True},
            },
        },
    )
    assert (
        "algorithms.kmeans.params.n_int: sklearn.cluster.MiniBatchKMeans has no parameter 'n_int' "
        "(did you mean n_init?)" in message
    )
    assert "algorithms.kmeans.params.random_state: set by tecb (the config's `seed`)" in message
    assert "algorithms.hdbscan.params.min_cluster_sise" in message and "did you mean min_cluster_size?" in message
    assert "reductions.umap.n_neighbours" in message and "did you mean n_neighbors?" in message
    assert "reductions.pca.whiten: pca (sklearn PCA, only n_components) has no parameter" in message


def test_valid_parameters_pass():
    config = {
        "algorithms": {"k": {"method": "minibatch_kmeans", "params": {"n_init": "auto", "batch_size": 500}}},
        "reductions": {
            "u": {
                "method": "pca_umap",
                "pca_components": 50,
                "n_components": 2,
                "metric": "cosine",
                "n_neighbors": 15,
                "min_dist": 0.0,
            }
        },
    }
    assert configcheck.parameter_errors(config) == []


def _keywords(cls) -> set[str]:
    return {
        name
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }


@pytest.mark.parametrize("method", sorted(configcheck.ALGORITHM_PARAMS))
def test_known_parameters_are_the_installed_estimators_keywords(method):
    owner, known = configcheck.ALGORITHM_PARAMS[method]
    module, name = owner.rsplit(".", 1)
    cls = getattr(pytest.importorskip(module), name)
    assert _keywords(cls) - set(configcheck.SET_BY_TECB) == set(known)


def _source_keywords(path: Path, cls: str) -> set[str]:
    """The keyword parameters of ``cls.__init__`` as written in the module file ``path`` (read, not imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    init = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    return {a.arg for a in init.args.args + init.args.kwonlyargs} - {"self"}


def test_known_umap_parameters_are_the_installed_umap_keywords():
    # the installed umap's source, read instead of imported: importing umap compiles its numba code (~15 CPU-s),
    # which the fast lane (make test-fast) leaves to the UMAP tests
    spec = importlib.util.find_spec("umap")
    keywords = _source_keywords(Path(spec.origin).parent / "umap_.py", "UMAP")
    assert "n_neighbors" in keywords and "min_dist" in keywords  # the class was found and read
    assert keywords - {"n_components", "metric", "random_state"} == set(configcheck.UMAP_PARAMS)


# --- YAML syntax errors ----------------------------------------------------------------------------------


BAD_YAML = "run: x\nseed: 42\ndatasets:\n  A: {source: germeval2019, text: s2s\n  B: 1\n"


def test_yaml_syntax_error_shows_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_YAML)
    with pytest.raises(ConfigError, match=rf"^{path}: YAML syntax error at line 5, column \d+: .*line 4") as err:
        configcheck.load_yaml(path)
    assert "source: germeval2019" not in str(err.value)  # the position, not the text of the line
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="list.yaml: a config file holds a mapping of keys, not list"):
        configcheck.load_yaml(tmp_path / "list.yaml")
    (tmp_path / "empty.yaml").write_text("")
    assert configcheck.load_yaml(tmp_path / "empty.yaml") == {}


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tecb.configcheck", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.slow
def test_cli_checks_a_file_over_the_defaults(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD_YAML)
    proc = _cli("bad.yaml", cwd=tmp_path)
    assert proc.returncode == 1 and "bad.yaml: YAML syntax error at line 5" in proc.stderr
    (tmp_path / "typo.yaml").write_text(yaml.safe_dump({"seed": PLANTED}))
    proc = _cli("typo.yaml", cwd=tmp_path)
    assert proc.returncode == 1 and "seed: expected integer" in proc.stderr
    assert PLANTED not in proc.stdout + proc.stderr
    proc = _cli(str(ROOT / "config" / "demo.yaml"), cwd=tmp_path)
    assert proc.returncode == 0 and "config OK" in proc.stdout, proc.stderr


# --- the workflow: nothing it writes holds the planted value ---------------------------------------------


def _files_holding(root: Path, needle: str, skip: Path) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and path != skip and needle.encode() in path.read_bytes():
            hits.append(str(path.relative_to(root)))
    return hits


@pytest.mark.workflow
@pytest.mark.parametrize(
    "overlay",
    [
        {"sources": {"reddit": {"client_secret": PLANTED}}},  # a credential-like key
        {"sources": {"reddit": {"app_key": PLANTED}}},  # an innocent-looking, invalid key
        {"seed": PLANTED},  # an innocent, valid key with a bad value
    ],
)
def test_planted_value_appears_nowhere_but_in_the_config_file(tmp_path, overlay):
    work = copy_project(tmp_path / "proj")
    config = work / "config" / "planted.yaml"
    config.write_text(yaml.safe_dump(overlay))
    proc = run_snakemake(work, "-n", "--configfile", "config/planted.yaml", check=False)
    assert proc.returncode != 0
    assert "invalid config" in proc.stdout or "credentials do not belong" in proc.stdout, proc.stdout[-2000:]
    assert PLANTED not in proc.stdout
    assert _files_holding(work, PLANTED, skip=config) == []


@pytest.mark.workflow
def test_yaml_syntax_error_in_a_configfile_does_not_print_the_line(tmp_path):
    """Snakemake 9 parses --configfile itself and says only "not valid JSON or YAML" (no line; the README points
    to `python -m tecb.configcheck`); the line's content, a planted value, is printed by neither."""
    work = copy_project(tmp_path / "proj")
    config = work / "config" / "broken.yaml"
    config.write_text(f"sources:\n  reddit: {{user_agent: {PLANTED}\nseed: 1\n")
    proc = run_snakemake(work, "-n", "--configfile", "config/broken.yaml", check=False)
    assert proc.returncode != 0 and PLANTED not in proc.stdout
    assert _files_holding(work, PLANTED, skip=config) == []
    cli = _cli("config/broken.yaml", cwd=work)
    assert cli.returncode == 1 and "config/broken.yaml: YAML syntax error at line 3" in cli.stderr
    assert PLANTED not in cli.stdout + cli.stderr
