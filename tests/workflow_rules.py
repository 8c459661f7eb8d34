"""The workflow's rules as Snakemake itself reads them: its API parses workflow/Snakefile under the given config
files (no DAG, no job) and this prints JSON: the files the Snakefile included, its `ruleorder` and per rule its
name, the file that defines it (relative to the project), its `script:`, its `conda:` env (as written, relative to
that file; a function of the model is asked for a model without an `env:` of its own) and its resources (a
function by its name). Tests read it through :func:`conftest.workflow_rules`, in a process of its own (Snakemake sets up
logging and sys.path when it parses).

    python tests/workflow_rules.py PROJECT [CONFIGFILE ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace


def _conda(rule, config: dict) -> str | None:
    if callable(rule.conda_env):  # functions/embed.smk's model_env: a model's own `env:`, else the default
        model = next(name for name, spec in config["models"].items() if not spec.get("env"))
        return rule.conda_env(SimpleNamespace(model=model))
    return rule.conda_env


def _resources(rule) -> dict:
    """A rule's resources by name: a function's name (``"cluster_mem_mb()"``), else the value as written."""
    found = {}
    for name, resource in rule.resources.items():
        if not name.startswith("_"):
            value = getattr(resource, "_value", resource)  # snakemake.resources.Resource: no public accessor
            found[name] = f"{value.__name__}()" if callable(value) else value
    return found


def read_rules(project: Path, configfiles: list[Path]) -> dict:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(configfiles=configfiles),
            storage_settings=StorageSettings(),
            snakefile=project / "workflow" / "Snakefile",
            workdir=project,
        )._workflow  # the parsed workflow: the API has no public accessor for its rules
        return {
            "included": sorted(str(Path(str(f)).relative_to(project)) for f in workflow.included),
            "ruleorder": [list(names) for names in workflow._ruleorder.order],
            "rules": {
                rule.name: {
                    "snakefile": str(Path(rule.snakefile).relative_to(project)),
                    "script": rule.script,
                    "conda": _conda(rule, workflow.config),
                    "resources": _resources(rule),
                }
                for rule in workflow.rules
            },
        }


if __name__ == "__main__":
    project, *configs = (Path(a).resolve() for a in sys.argv[1:])
    json.dump(read_rules(project, configs), sys.stdout)
