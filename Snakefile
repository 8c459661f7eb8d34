# tecb: the German Text Embedding Clustering Benchmark (KONVENS 2023), end to end.
#   snakemake --cores all --resources gpu=1                                the paper's full benchmark
#   snakemake --configfile config/demo.yaml --cores all --resources gpu=1  the offline demo (results/demo/)
#   snakemake --configfile my.yaml --config seed=1 --cores all             your config over the defaults
# Config precedence, lowest first: config/config.yaml (the defaults) < config/config.yaml of the working directory
# (--directory .test) < each --configfile < --config key=value. Mappings merge key by key; `datasets`, `models`
# and `configurations` are replaced wholesale (src/tecb/config.py, config/README.md).

import os
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, os.path.join(workflow.basedir, "src"))
from tecb.config import layered_config
from tecb.configcheck import ConfigError, validated_config

_settings = workflow.config_settings
# Checked here, not with snakemake.utils.validate: that prints the failing part of the config, values and
# all (a credential put there by mistake included). tecb.configcheck names keys only, refuses
# credential-like keys, checks method parameters and fills in the schema's defaults.
try:
    _merged = layered_config(
        workflow.basedir, os.getcwd(), _settings.configfiles, _settings.config
    )
    _checked = validated_config(
        _merged, os.path.join(workflow.basedir, "workflow/schemas/config.schema.yaml")
    )
except ConfigError as _error:
    raise WorkflowError(str(_error)) from None
config.clear()
config.update(_checked)
# models with `prompt_variants` run once per variant, as models {model}@{variant} (tecb.embed.spec)
from tecb.embed.spec import expand_prompt_variants

try:
    config["models"] = expand_prompt_variants(config["models"])
except ValueError as _error:
    raise WorkflowError(f"config: {_error}") from None


# Parallel jobs never oversubscribe RAM: without --resources mem_mb=N (or mem=...), Snakemake may start jobs whose
# declared mem_mb add up to the machine's physical memory, no more. Not on a cluster (--jobs with an executor:
# each job gets its own allocation there). Profiles are static YAML, so this is computed here.
try:
    _MACHINE_MEMORY_MB = (
        os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    )
except (ValueError, OSError, AttributeError):
    _MACHINE_MEMORY_MB = None
if (
    workflow.global_resources["_nodes"].value is None
    and not {"mem", "mem_mb", "mem_mib", "mem_gb"} & set(workflow.global_resources)
    and _MACHINE_MEMORY_MB
):
    from snakemake.resources import Resource

    workflow.global_resources["mem"] = Resource(
        "mem_mb", _MACHINE_MEMORY_MB
    ).standardize_size()


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/reddit.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/adapt.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/inspect.smk"


# Before any job (docs/reliability.md): the locks a killed run left are removed when no run is alive
# (tecb.unlock), and the files, local models and import-path algorithms the config points to are checked
# (tecb.preflight: columns, formats, encodings, config.json types, clusterers; cached by file fingerprint).
if workflow.is_main_process:
    from tecb.preflight import CACHE_DIR, PreflightError, run_preflight
    from tecb.unlock import remove_stale_locks

    DATASET_SOURCES = sorted({d["source"] for d in config["datasets"].values()})

    remove_stale_locks(".", log=lambda message: print(message, file=sys.stderr))
    try:
        run_preflight(
            config,
            produced=produced_by_a_rule,
            cache_dir=CACHE_DIR,
            source_paths={s: source_path(s) for s in DATASET_SOURCES},
        )
    except PreflightError as _error:
        raise WorkflowError(str(_error)) from None


# A killed job (kill -9, node failure, lost SLURM allocation) can leave a temporary beside its output
# (.NAME.XXXXXXXX.tmp, tecb.io.atomic_path): removed here when untouched for 2 hours, and by the job's
# writer when it runs again. The run record lets the next start tell this run's locks from a dead one's.
onstart:
    from tecb.io import remove_orphans
    from tecb.unlock import record_run

    record_run(".")
    for _leftover in remove_orphans([RESULTS, "resources"], min_age_seconds=7200):
        print(
            f"removed a killed job's temporary file: {_leftover}", file=sys.stderr
        )


onsuccess:
    from tecb.unlock import forget_run

    forget_run(".")


onerror:
    from tecb.unlock import forget_run

    forget_run(".")


rule all:
    default_target: True
    input:
        all_outputs(),
