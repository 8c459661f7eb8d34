# Wildcard constraints, input, params and resources functions of the rules in embed.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


def models_of_kind(*kinds):
    """The configured models whose `kind` is one of ``kinds``."""
    return [m for m, spec in config["models"].items() if spec["kind"] in kinds]


def model_spec(model):
    """A model's config entry (its kind filled by the schema), with the directory a hub or tiny-bert model is read from."""
    spec = dict(config["models"][model])
    if spec["kind"] == "huggingface":
        spec["path"] = hub_model_dir(model)
    elif spec["kind"] == "tiny-bert":
        spec["path"] = built_model_dir(model)
    return spec


def model_input(wildcards):
    """The model directory an embed job reads (none for TF-IDF)."""
    spec = model_spec(wildcards.model)
    return [] if spec["kind"] == "tfidf" else [spec["path"]]


def gpus_for(wildcards):
    """GPUs an embed job asks for: none for TF-IDF, one otherwise."""
    return 0 if model_spec(wildcards.model)["kind"] == "tfidf" else 1


# local models (the model_digest rule): their files' content is an input of their embed jobs


def model_digest_input(wildcards):
    """The content hash an embed job depends on: a `kind: local` model's, else none."""
    kind = model_spec(wildcards.model)["kind"]
    return [model_digest_path(wildcards.model)] if kind == "local" else []


def local_model_path(wildcards):
    """The configured `path` of a `kind: local` model."""
    return config["models"][wildcards.model]["path"]


def local_model_stat(wildcards):
    """Size and mtime of each file: a changed file reruns the digest even when its new mtime is older."""
    from tecb.embed.spec import model_files

    return {
        f: [os.stat(f).st_size, os.stat(f).st_mtime_ns]
        for f in model_files(local_model_path(wildcards))
    }
