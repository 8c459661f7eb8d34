# Wildcard constraints, input, params and resources functions of the rules in embed.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


from tecb.embed.shard import SHARDABLE_KINDS
from tecb.embed.spec import FILELESS_KINDS, encoder_settings, gpus_asked, vector_seed


def models_of_kind(*kinds):
    """The configured models whose `kind` is one of ``kinds``."""
    return [m for m, spec in config["models"].items() if spec["kind"] in kinds]


# --- the embed stage's one table: which jobs serve each model ----------------------------------------------
# The switches embed.batch and embed.shard_size are read here and only here. They choose, per model, the
# granularity of the jobs that embed it and the one rule that writes a run's embeddings/{model}/{dataset}.parquet;
# every combination is served. EMBED_WRITERS says it, and every other file reads it (embed_models): the rules'
# wildcard constraints (each output has one writer, no ruleorder), which rules files embed.smk includes (a rule no
# model needs is not shown to the config), the targets (common.smk) and the report's benchmarks (report.smk).
#   unit "shard"    embed.shard_size, transformer kinds (tecb.embed.shard.SHARDABLE_KINDS): embed_shard jobs, then
#                   the writer embed_merge
#   unit "model"    embed.batch, the other models: the writer embed_batch embeds every dataset in one job
#   unit "dataset"  otherwise: the writer embed
# The store (embed.cache_dir) changes no rule: each writer's job serves its files from the store's entries itself
# (tecb.embed.cache.serve_from_entry), so the store is not read here.
#: the threads an embed-stage job declares (embed.threads, read here only; a job's script takes Snakemake's)
EMBED_THREADS = config["embed"]["threads"]
SHARD_SIZE = config["embed"].get("shard_size")


def embed_jobs(spec):
    """The jobs that serve a model of config entry ``spec``: the granularity its vectors are embedded at
    (``unit``: shard, model or dataset) and the rule that writes its run files (``writer``).
    """
    if SHARD_SIZE and spec["kind"] in SHARDABLE_KINDS:
        return {"unit": "shard", "writer": "embed_merge"}
    if config["embed"]["batch"]:
        return {"unit": "model", "writer": "embed_batch"}
    return {"unit": "dataset", "writer": "embed"}


#: model -> {"unit": ..., "writer": ...} (embed_jobs): the embed stage's one table
EMBED_WRITERS = {m: embed_jobs(spec) for m, spec in config["models"].items()}


def embed_models(*, writer=None, unit=None):
    """The models (in config order) whose run files ``writer`` writes and (or) whose vectors are embedded per
    ``unit``, by EMBED_WRITERS."""
    return [
        m
        for m, jobs in EMBED_WRITERS.items()
        if writer in (None, jobs["writer"]) and unit in (None, jobs["unit"])
    ]


def dag_records():
    """The JSON files of this run that input functions read while the DAG is built, as (paths, fields, what):
    the shard plans (embed.shard_size). The Snakefile removes a damaged one at the start, naming it; `all` names
    them (kept_files), so the same command writes it again.
    """
    return [
        (
            (
                [shard_plan_path(d) for d in DATASETS]
                if embed_models(unit="shard")
                else []
            ),
            ("n_texts", "shard_size", "shards"),
            "shard plan",
        ),
    ]


def model_spec(model):
    """A model's config entry (its kind filled by the schema), with the directory a hub or tiny-bert model is read from."""
    spec = dict(config["models"][model])
    if spec["kind"] == "huggingface" or (
        spec["kind"] == "mteb" and not spec.get("path")
    ):
        spec["path"] = hub_model_dir(model)
    elif spec["kind"] == "tiny-bert" or (
        spec["kind"] == "static" and spec.get("distill_from")
    ):
        spec["path"] = built_model_dir(model)
    return spec


def model_settings(model, dataset):
    """What decides a model's vectors for a dataset (tecb.embed.spec.encoder_settings): the `settings` param of
    every job that embeds it (embed, embed_batch, embed_shard) and adapt's `encoder`.
    """
    return encoder_settings(model_spec(model), config["embed"], dataset)


def embed_settings(wildcards):
    """model_settings of a job's (model, dataset) wildcards."""
    return model_settings(wildcards.model, wildcards.dataset)


def model_input(wildcards):
    """The model directory or vector file an embed job reads (none for TF-IDF and Python objects)."""
    spec = model_spec(wildcards.model)
    if spec["kind"] in FILELESS_KINDS:
        return []
    if spec["kind"] == "precomputed":
        return digest_paths(spec)
    return [spec["path"]]


def model_kind(wildcards):
    """A model's kind (the embed_batch job's params)."""
    return model_spec(wildcards.model)["kind"]


def embed_seed(wildcards):
    """The seed that decides a model's vectors (tecb.embed.spec.vector_seed: the run's for TF-IDF, else None)."""
    return vector_seed(model_kind(wildcards), SEED)


def gpus_for(wildcards):
    """GPUs an embed job asks for (tecb.embed.spec.gpus_asked: by the model's kind and `embed.device`, read as the
    encoders read it)."""
    return gpus_asked(model_spec(wildcards.model)["kind"], config["embed"])


# local models (the model_digest rule): their files' content is an input of their embed jobs


def model_digest_input(wildcards):
    """The content hash an embed job depends on: a local model's, a precomputed file's, a static model's."""
    spec = config["models"][wildcards.model]
    return [model_digest_path(wildcards.model)] if digest_paths(spec) else []


def local_model_path(wildcards):
    """The paths hashed into a model's digest (tecb.embed.spec.digest_paths)."""
    return digest_paths(config["models"][wildcards.model])


def local_model_stat(wildcards):
    """Size and mtime of each file: a changed file reruns the digest even when its new mtime is older."""
    from tecb.embed.spec import model_files

    return {
        f: [os.stat(f).st_size, os.stat(f).st_mtime_ns]
        for path in local_model_path(wildcards)
        for f in model_files(path)
    }


# hub models by folder key: a model's prompt variants ({model}@{variant}) share one prefetched folder
HUB_ENTRIES = {
    m.split("@")[0]: config["models"][m] for m in models_of_kind("huggingface")
}


def mteb_revision(model):
    """The revision a `kind: mteb` model runs (the config's override, else mteb's), resolved at DAG time."""
    from tecb.embed.mteb_model import resolved_revision

    return resolved_revision(config["models"][model])


def mteb_hub_entry(spec):
    """What prefetch_model downloads for a model of kind mteb without `path`, i.e. mteb's name at the pinned revision."""
    from tecb.embed.mteb_model import resolved_revision

    return {
        "id": spec["name"],
        "revision": resolved_revision(spec),
        "code_revisions": spec.get("code_revisions"),
    }


HUB_ENTRIES.update(
    {
        m: mteb_hub_entry(config["models"][m])
        for m in models_of_kind("mteb")
        if not config["models"][m].get("path")
    }
)


def model_env(wildcards):
    """A model's own conda environment (`env:`, a path from the project root), else envs/embed.yaml."""
    env = config["models"][wildcards.model].get("env")
    return os.path.join(PROJECT_DIR, env) if env else "../../envs/embed.yaml"


def distill_source(wildcards):
    """The folder a static model is distilled from: a model key's folder, or a path."""
    source = config["models"][wildcards.model]["distill_from"]
    return model_spec(source)["path"] if source in config["models"] else source


def distill_source_inputs(wildcards):
    """The source folder and, for a key with a digest (local models), that digest."""
    source = config["models"][wildcards.model]["distill_from"]
    if source in config["models"]:
        return [model_spec(source)["path"]] + (
            [model_digest_path(source)]
            if digest_paths(config["models"][source])
            else []
        )
    return model_files(source)


def embed_mem_mb(wildcards, input, attempt):
    """An embed or embed_batch job's memory (tecb.embed.job.job_memory_mb: by the model's kind and the largest
    dataset's texts) x attempt; re-evaluated once the texts exist."""
    from tecb.embed.job import job_memory_mb

    dataset = getattr(wildcards, "dataset", DATASETS[0])
    return attempt * job_memory_mb(
        model_settings(wildcards.model, dataset), texts=input.texts, model=input.model
    )
