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


def yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", README.read_text(), flags=re.S)


def test_every_schema_key_is_documented():
    text = README.read_text()
    missing = [k for k in schema_keys() if f"`{k}`" not in text]
    assert not missing, f"config/README.md does not document: {missing}"


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
