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
    # a source of a dataset has one of them (tecb.configcheck.DOWNLOADED_SOURCES)
    return {**DOWNLOADS, "reddit": REDDIT_SUBMISSIONS}[source]


def dataset_source(wildcards):
    """The raw file a build_dataset job reads (source_path of its dataset's source)."""
    return source_path(config["datasets"][wildcards.dataset]["source"])


def build_dataset_mem_mb(wildcards, input, attempt):
    """A build_dataset job's memory (tecb.data.datasets.build_memory_mb: by its raw file's rows and text bytes)
    x attempt; re-evaluated once the file exists."""
    from tecb.data.datasets import build_memory_mb

    source = input.source
    return attempt * build_memory_mb(
        [source] if isinstance(source, str) else list(source)
    )


def dataset_source_spec(wildcards):
    """The parts of a dataset's source entry that decide how it is built (not how it is fetched)."""
    name = config["datasets"][wildcards.dataset]["source"]
    spec = config["sources"].get(name, {})
    return {
        name: {k: spec[k] for k in ("builder", "repo_id", "revision") if spec.get(k)}
    }


def produced_by_a_rule(path):
    """Whether the workflow writes ``path`` (a download, the demo's inputs), so it may not exist yet."""
    return any(r.is_producer(str(path)) for r in workflow.rules)


def source_files_fingerprint(wildcards):
    """``{path: sha256}`` of the dataset's source file(s) when they are the user's own, not written by the
    workflow (whose files Snakemake follows through the job writing them). A params entry of build_dataset.
    """
    path = dataset_source(wildcards)
    paths = path if isinstance(path, (list, tuple)) else [path]
    if any(produced_by_a_rule(p) or not os.path.exists(p) for p in paths):
        return {}
    from tecb.preflight import CACHE_DIR, source_fingerprint

    return source_fingerprint(path, cache_dir=CACHE_DIR)


def with_source_fingerprint(spec, wildcards):
    """A build's source spec (``{source: {...}}``) with ``files_sha256`` added for a file of your own, so that
    replacing it rebuilds the dataset whatever its modification time. Added only then: the params of datasets
    built from downloads or the demo's inputs stay as they were (no rerun of existing results).
    """
    files = source_files_fingerprint(wildcards)
    if not files:
        return spec
    name = config["datasets"][wildcards.dataset]["source"]
    return {**spec, name: {**spec.get(name, {}), "files_sha256": files}}
