# Input and params functions of the rules in datasets.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


def source_path(source):
    """Where a source's raw file is: the config's local `path`, else the download target."""
    spec = config["sources"].get(source, {})
    if spec.get("path"):
        return spec["path"]
    if (
        spec.get("repo_id")
        or spec.get("builder") == "published"
        or source.startswith("published_")
    ):
        return published_path(source)
    defaults = {**DOWNLOADS, "reddit": REDDIT_SUBMISSIONS}
    if source not in defaults:
        raise ValueError(
            f"config: sources.{source} has no `path` and nothing to download"
        )
    return defaults[source]


def dataset_source(wildcards):
    """The raw file a build_dataset job reads (source_path of its dataset's source)."""
    return source_path(config["datasets"][wildcards.dataset]["source"])


def dataset_source_spec(wildcards):
    """The parts of a dataset's source entry that decide how it is built (not how it is fetched)."""
    name = config["datasets"][wildcards.dataset]["source"]
    spec = config["sources"].get(name, {})
    return {
        name: {k: spec[k] for k in ("builder", "repo_id", "revision") if spec.get(k)}
    }
