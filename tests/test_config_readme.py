"""config/README.md is complete and correct: it names every key of the schema, its YAML examples are valid
configs, and the 10-line custom config in it runs as written."""

from __future__ import annotations

import re

import jsonschema
import pandas as pd
import pytest
import yaml
from conftest import ROOT, copy_project, run_snakemake

from tecb.config import overlay_config

README = ROOT / "config" / "README.md"
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())


def schema_keys(node=SCHEMA, prefix="", depth=0):
    for key, sub in node.get("properties", {}).items():
        yield prefix + key
        if depth < 3:
            yield from schema_keys(sub, f"{prefix}{key}.", depth + 1)
            items = sub.get("additionalProperties")
            if isinstance(items, dict):
                if "$ref" in items:
                    items = SCHEMA["definitions"][items["$ref"].rsplit("/", 1)[-1]]
                yield from schema_keys(items, f"{prefix}{key}.<name>.", depth + 1)


def test_every_setting_has_a_description():
    """Every setting of the schema (properties, `<name>` entries, list items' fields) says what it does."""
    from tecb.configdoc import settings

    found = list(settings(SCHEMA))
    assert len(found) > 200
    missing = [key for key, sub in found if not str(sub.get("description", "")).strip()]
    assert missing == [], f"workflow/schemas/config.schema.yaml: settings without a description: {missing}"


def test_the_readme_tables_are_the_schema():
    """config/README.md's key tables are exactly what the schema renders (descriptions and defaults), and every
    top-level key has its table, once."""
    from tecb.configdoc import render, tabled_keys

    text = README.read_text(encoding="utf-8")
    assert sorted(tabled_keys(text)) == sorted(SCHEMA["properties"]), "a top-level key has no table, or two"
    rendered = render(text, SCHEMA)
    stale = [a for a, b in zip(text.splitlines(), rendered.splitlines()) if a != b]
    assert rendered == text, f"config/README.md differs from the schema (python -m tecb.configdoc): {stale[:5]}"


def test_the_rendered_table_follows_a_schema_change():
    """The check can fail: a changed default or description in the schema changes the rendered README."""
    import copy

    from tecb.configdoc import render

    text = README.read_text(encoding="utf-8")
    changed = copy.deepcopy(SCHEMA)
    changed["properties"]["cluster"]["properties"]["threads"]["default"] = 7
    changed["properties"]["seed"]["description"] = "a new meaning"
    rendered = render(text, changed)
    assert "| `cluster.threads` |" in rendered and "| `7` |" in rendered
    assert "| `seed` | a new meaning | `42` |" in rendered
    assert rendered != text


def test_a_default_lives_only_in_the_schema():
    """config/config.yaml holds the paper's choices: no key there repeats the schema's default (a second copy
    drifts: `cluster.threads` once was 2 in the schema and 4 in config/config.yaml)."""
    from tecb.configdoc import settings

    paper = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    schema_settings = dict(settings(SCHEMA))
    named = {key.rsplit(".<name>.", 1)[0] for key in schema_settings if ".<name>." in key}
    repeated = []

    def walk(value, path):
        dotted = ".".join(path)
        if dotted in schema_settings and schema_settings[dotted].get("default", object()) == value:
            repeated.append(dotted)
        if isinstance(value, dict):
            for key, sub in value.items():
                step = "<name>" if dotted in named and f"{dotted}.{key}" not in schema_settings else key
                walk(sub, [*path, step])

    walk(paper, [])
    assert repeated == [], f"config/config.yaml repeats the schema's defaults of: {repeated}"


def test_the_paper_config_keeps_its_choices_with_the_defaults_filled_in():
    """Removing the repeated defaults changed nothing: the paper's validated config has the values it had."""
    from tecb.config import layered_config
    from tecb.configcheck import validated_config

    config = validated_config(layered_config(ROOT, ROOT), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    assert config["seed"] == 42 and config["cluster"]["threads"] == 4
    assert config["embed"] == {**config["embed"], "batch_size": 32, "device": "auto", "dtype": "float32"}
    assert {k: v["n_components"] for k, v in config["reductions"].items()} == {"pca": 2, "umap": 2, "pca_umap": 2}
    assert config["tables"]["statistics"]["n_resamples"] == 10000 and config["tables"]["metrics"] == ["v_measure"]
    assert config["pretrain"]["seeds"] == [42, 1, 2] and config["pretrain"]["datasets"] is None
    assert config["pretrain"]["methods"]["tsdae"]["max_length"] == 512
    assert config["pretrain"]["methods"]["wwm"]["grad_accum"] == 8
    # and in the order the paper's config gave them (a job's params are compared by their repr, order included)
    assert [list(v) for v in config["reductions"].values()] == [
        ["method", "n_components"],
        ["method", "n_components", "metric"],
        ["method", "pca_components", "n_components", "metric"],
    ]
    wwm = ["epochs", "budget", "table_epochs", "lr", "batch_size", "grad_accum", "weight_decay", "warmup_ratio"]
    assert list(config["pretrain"]["methods"]["wwm"]) == [*wwm, "max_length", "mlm_probability"]
    assert list(config["pretrain"]["methods"]["tsdae"]) == [*wwm, "max_length", "deletion_ratio"]
    assert list(config["tables"]["statistics"]) == [
        "enabled",
        "test",
        "alpha",
        "confidence",
        "n_resamples",
        "intervals",
        "labels",
    ]


def yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", README.read_text(), flags=re.S)


def test_every_schema_key_is_documented():
    text = README.read_text()
    missing = [k for k in schema_keys() if f"`{k}`" not in text]
    assert not missing, f"config/README.md does not document: {missing}"


@pytest.mark.slow
def test_the_yaml_examples_are_valid_configs():
    defaults = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    blocks = yaml_blocks()
    assert len(blocks) >= 10
    for block in blocks:
        merged = overlay_config(defaults, yaml.safe_load(block))
        jsonschema.validate(merged, SCHEMA)


def test_first_own_config_is_ten_lines():
    block = yaml_blocks()[0]
    assert block.startswith("run: mine") and len(block.strip().splitlines()) <= 10


@pytest.mark.workflow
def test_first_own_config_runs_as_written(tmp_path):
    work = copy_project(tmp_path / "proj")
    (work / "config" / "mine.yaml").write_text(yaml_blocks()[0])
    run_snakemake(work, "--configfile", "config/mine.yaml", "--cores", "2")
    t2 = pd.read_csv(work / "results" / "mine" / "tables" / "table2.csv", index_col=0)
    assert list(t2.index) == ["TF-IDF + SVD"]
    assert {"BlurbsClusteringS2S", "TenKGnadClusteringP2P"} <= set(t2.columns)
    assert (
        work / "results" / "mine" / "scores" / "tfidf" / "BlurbsClusteringS2S" / "umap" / "kmeans.parquet"
    ).is_file()
    assert not (work / "results" / "scores.parquet").exists()  # nothing in the paper's folder


def test_config_examples_in_the_readme_and_docs_are_valid_configs():
    """Every YAML example in README.md and docs/ whose keys are config keys passes the workflow's own validation
    (schema, method parameters, credential-like keys) over the defaults."""
    from tecb.configcheck import validated_config

    defaults = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    checked = 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S):
            cfg = yaml.safe_load(block)
            if not isinstance(cfg, dict) or not set(cfg) <= set(SCHEMA["properties"]):
                continue  # a profile or another file's example
            validated_config(overlay_config(defaults, cfg), str(schema))
            checked += 1
    assert checked >= 6
