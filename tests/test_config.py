"""Config overlays (src/tecb/config.py): a small user config merged over the defaults, with documented precedence;
runs (`run:`); names refused at validation. Unit tests first, then dry runs of the workflow."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake

from tecb import config as C

DEFAULTS = {
    "seed": 42,
    "embed": {"device": "auto", "batch_size": 32},
    "models": {"a": {"id": "x/a"}, "b": {"id": "x/b"}},
    "datasets": {"D1": {"source": "s"}, "D2": {"source": "s"}},
    "configurations": [{"algorithm": "kmeans", "reduction": "none"}, {"algorithm": "kmeans", "reduction": "pca"}],
    "sources": {"s": {"url": "https://example.org/s.zip", "path": None}},
    "pretrain": {"enabled": True, "models": ["a"]},
}


def test_mappings_merge_and_the_three_sections_are_replaced():
    user = {
        "embed": {"device": "cpu"},
        "models": {"m": {"kind": "tfidf"}},
        "datasets": {"D3": {"source": "s"}},
        "configurations": [{"algorithm": "kmeans", "reduction": "none"}],
        "sources": {"s": {"path": "local.zip"}},
    }
    got = C.overlay_config(DEFAULTS, user)
    assert got["embed"] == {"device": "cpu", "batch_size": 32}  # key by key
    assert got["sources"]["s"] == {"url": "https://example.org/s.zip", "path": "local.zip"}
    assert got["models"] == {"m": {"kind": "tfidf"}}  # replaced, not the defaults' plus the user's
    assert got["datasets"] == {"D3": {"source": "s"}}
    assert got["configurations"] == [{"algorithm": "kmeans", "reduction": "none"}]
    assert got["pretrain"]["enabled"] is False  # models replaced, pretrain not given: off
    assert DEFAULTS["embed"]["device"] == "auto" and "m" not in DEFAULTS["models"]  # inputs untouched


def test_precedence_is_layer_order():
    got = C.overlay_config(DEFAULTS, {"seed": 1, "embed": {"device": "cpu"}}, {"seed": 2})
    assert got["seed"] == 2 and got["embed"]["device"] == "cpu"
    assert got["models"] == DEFAULTS["models"] and got["pretrain"]["enabled"] is True  # nothing replaced


def test_a_layer_giving_pretrain_keeps_it():
    got = C.overlay_config(DEFAULTS, {"models": {"m": {}}, "pretrain": {"models": ["m"]}})
    assert got["pretrain"] == {"enabled": True, "models": ["m"]}


def test_layered_config_reads_the_working_directorys_config(tmp_path):
    wf = tmp_path / "wf"
    (wf / "config").mkdir(parents=True)
    (wf / "config" / "config.yaml").write_text(yaml.safe_dump(DEFAULTS))
    work = tmp_path / "work"
    (work / "config").mkdir(parents=True)
    (work / "config" / "config.yaml").write_text("seed: 5\nembed: {device: cpu}\n")
    extra = tmp_path / "extra.yaml"
    extra.write_text("seed: 6\n")
    assert C.layered_config(wf, work)["seed"] == 5
    assert C.layered_config(wf, work, [extra])["seed"] == 6
    got = C.layered_config(wf, work, [extra], {"seed": 7})
    assert got["seed"] == 7 and got["embed"]["device"] == "cpu"
    assert C.layered_config(wf, wf)["seed"] == 42  # the defaults are not layered over themselves
    (work / "config" / "config.yaml").write_text("- a list\n")
    with pytest.raises(ValueError, match="mapping"):
        C.layered_config(wf, work)


SECTION_ENTRIES = {
    "datasets": {"source": "million_posts", "text": "s2s"},
    "models": {"kind": "tfidf"},
    "sources": {"path": "x.tsv"},
    "reductions": {"method": "pca"},
    "algorithms": {"method": "minibatch_kmeans"},
}


@pytest.mark.parametrize("section", list(SECTION_ENTRIES))
@pytest.mark.parametrize("name", ["..", ".", "a/b", "../x", ".hidden", "-x", ""])
def test_names_that_are_not_one_path_component_are_refused(section, name):
    """Keys become path components ({dataset}, {model}, ...): `..` would escape results/, `a/b` nest."""
    from tecb.configcheck import ConfigError, validated_config

    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    cfg = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
    validated_config(cfg, schema)
    cfg.setdefault(section, {})[name] = SECTION_ENTRIES[section]
    with pytest.raises(ConfigError, match=rf"{section}: '{re.escape(name)}' does not match"):
        validated_config(cfg, schema)


def test_ordinary_names_are_accepted():
    from tecb.configcheck import validated_config

    cfg = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
    for section, entry in SECTION_ENTRIES.items():
        cfg.setdefault(section, {})["My-Data_2.v1"] = entry
    validated_config(cfg, ROOT / "workflow" / "schemas" / "config.schema.yaml")


# --- the workflow ---------------------------------------------------------------------------------------------


def _dry(work, *args, check=True):
    return run_snakemake(work, "-n", "--cores", "1", *args, check=check)


@pytest.fixture(scope="module")
def proj(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("config") / "proj")


@pytest.mark.workflow
def test_config_seed_on_the_command_line(proj):
    """`--config seed=1` alone: the paper's config with another seed (was: 'datasets' is a required property)."""
    out = _dry(proj, "--config", "seed=1").stdout
    assert "results/embeddings/gbert-base/BlurbsClusteringS2S.parquet" in out


@pytest.mark.workflow
def test_a_small_user_config_over_the_defaults(proj):
    (proj / "config" / "small.yaml").write_text(
        "run: small\n"
        "datasets: {TenKGnadClusteringS2S: {source: million_posts, text: s2s}}\n"
        "models: {tfidf: {kind: tfidf, dim: 16}}\n"
        "sources: {million_posts: {path: resources/demo/corpus.sqlite3}}\n"
        "configurations: [{algorithm: kmeans, reduction: none}]\n"
    )
    out = _dry(proj, "--configfile", "config/small.yaml").stdout
    assert "results/small/scores/tfidf/TenKGnadClusteringS2S/none/kmeans.parquet" in out
    assert "gbert" not in out and "rule pretrain" not in out  # the paper's models and pre-training are not inherited
    assert "logs/small/build_dataset/TenKGnadClusteringS2S.log" in out


@pytest.mark.workflow
def test_the_demo_writes_under_results_demo(proj):
    out = _dry(proj, "--configfile", "config/demo.yaml").stdout
    assert "results/demo/scores.parquet" in out and "results/demo/tables/table2.md" in out
    assert "resources/demo/corpus.sqlite3" in out  # resources/ stays shared


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"datasets": {"My/Data": {"source": "million_posts", "text": "s2s"}}}, "My/Data"),
        ({"datasets": {"..": {"source": "million_posts", "text": "s2s"}}}, "'..' does not match"),
        ({"run": "scores"}, "run"),
        ({"run": "../elsewhere"}, "run"),
        ({"reductions": {"pca/2": {"method": "pca"}}}, "pca/2"),
        # a revision is a folder of the MTEB results: "<commit>" copied from an example is refused, not a crash
        ({"models": {"m": {"name": "M", "id": "org/m", "revision": "<commit>"}}}, "models.m.revision"),
    ],
)
@pytest.mark.workflow
def test_names_that_break_paths_are_refused(proj, change, needle):
    cfg = yaml.safe_load((ROOT / "config" / "demo.yaml").read_text())
    cfg.update(change)
    (proj / "config" / "bad.yaml").write_text(yaml.safe_dump(cfg))
    proc = _dry(proj, "--configfile", "config/bad.yaml", check=False)
    assert proc.returncode != 0 and needle in proc.stdout, proc.stdout[-2000:]


@pytest.mark.workflow
def test_the_catalog_test_config_runs(tmp_path):
    """`.test/config/config.yaml` (snakemake-workflow-catalog convention, what CI runs): `--directory .test`
    layers it over the workflow's config/config.yaml and writes under .test/results/test/."""
    work = copy_project(tmp_path / "proj")
    run_snakemake(work, "--directory", ".test", "--cores", "2")
    out = work / ".test" / "results" / "test"
    assert (out / "scores.parquet").is_file() and (out / "tables" / "table2.md").is_file()
    assert not (work / "results").exists()
    again = run_snakemake(work, "--directory", ".test", "-n")
    assert "Nothing to be done" in again.stdout


def test_configfile_arguments_and_yaml_problems(tmp_path):
    """What the logger plugin prints when Snakemake refuses a --configfile: load_yaml's message for each file."""
    from tecb.config import configfile_arguments, yaml_problems

    argv = ["-n", "--configfile", "a.yaml", "b.yaml", "--cores", "1", "--configfiles=c.yaml", "all"]
    assert configfile_arguments(argv) == ["a.yaml", "b.yaml", "c.yaml"]
    (tmp_path / "tab.yaml").write_text("seed: 1\nembed:\n\tdevice: cpu\n")
    (tmp_path / "list.yaml").write_text("- a\n")
    (tmp_path / "good.yaml").write_text("seed: 1\n")
    found = yaml_problems([tmp_path / n for n in ("good.yaml", "tab.yaml", "list.yaml", "missing.yaml")])
    assert len(found) == 2 and "tab.yaml: YAML syntax error at line 3, column 1" in found[0]
    assert "list.yaml: a config file holds a mapping of keys, not list" in found[1]
