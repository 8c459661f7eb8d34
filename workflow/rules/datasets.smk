from tecb.data.datasets import mark_local_published

# Raw sources -> datasets (texts.parquet + splits.parquet). Downloads are local rules under resources/.


include: "functions/datasets.smk"


localrules:
    demo_data,
    download_germeval2019,
    download_million_posts,
    download_published,


rule demo_data:
    """Small raw inputs in the real formats, for the offline demo (tecb.data.demo)."""
    output:
        **DEMO_INPUTS,
    log:
        shared_log("demo_data.log"),
    conda:
        "../../envs/datasets.yaml"
    params:
        seed=SEED,
    script:
        "../scripts/demo_data.py"


rule download_germeval2019:
    output:
        DOWNLOADS["germeval2019"],
    log:
        shared_log("download", "germeval2019.log"),
    conda:
        "../../envs/datasets.yaml"
    params:
        url=config["sources"].get("germeval2019", {}).get("url"),
        sha256=config["sources"].get("germeval2019", {}).get("sha256"),
    script:
        "../scripts/download.py"


rule download_million_posts:
    output:
        corpus=DOWNLOADS["million_posts"],
        archive=temp(MILLION_POSTS_ARCHIVE),  # the corpus is extracted from it, then it goes
    log:
        shared_log("download", "million_posts.log"),
    conda:
        "../../envs/datasets.yaml"
    params:
        url=config["sources"].get("million_posts", {}).get("url"),
        sha256=config["sources"].get("million_posts", {}).get("sha256"),
        member="corpus.sqlite3",
    script:
        "../scripts/download.py"


rule download_published:
    """A published dataset's test.jsonl from the Hugging Face hub at its pinned revision."""
    output:
        published_path("{source}"),
    log:
        shared_log("download", "{source}.log"),
    conda:
        "../../envs/datasets.yaml"
    params:
        spec=lambda wildcards: config["sources"].get(wildcards.source, {}),
    script:
        "../scripts/download_published.py"


rule build_dataset:
    """One dataset from its raw source with the paper's selection rules and split recipe."""
    input:
        source=dataset_source,
    output:
        texts=texts_path("{dataset}"),
        splits=splits_path("{dataset}"),
    log:
        log_path("build_dataset", "{dataset}.log"),
    conda:
        "../../envs/datasets.yaml"
    resources:
        mem_mb=build_dataset_mem_mb,
    params:
        spec=lambda wildcards: config["datasets"][wildcards.dataset],
        # how it is built, and whether published splits come from a local copy (checked against Table 1)
        # ... and, for a file of your own, its content (sha256): replacing it rebuilds this dataset
        source=lambda wildcards: with_source_fingerprint(
            mark_local_published(
                dataset_source_spec(wildcards),
                config["datasets"][wildcards.dataset],
                config["sources"],
            ),
            wildcards,
        ),
        seed=SEED,
    script:
        "../scripts/build_dataset.py"
