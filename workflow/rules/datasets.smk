# Raw sources -> datasets (texts.parquet + splits.parquet). Downloads are local rules under resources/.


localrules:
    demo_data,
    download_germeval2019,
    download_million_posts,
    download_published,


rule demo_data:
    """Small raw inputs in the real formats, for the offline demo (tecb.demo_data)."""
    output:
        germeval="resources/demo/germeval2019.zip",
        million_posts="resources/demo/corpus.sqlite3",
        reddit="resources/demo/submissions.parquet",
    log:
        "logs/demo_data.log",
    conda:
        "../../envs/datasets.yaml"
    params:
        seed=SEED,
    script:
        "../scripts/demo_data.py"


rule download_germeval2019:
    output:
        "resources/downloads/germeval2019t1-public-data-final.zip",
    log:
        "logs/download/germeval2019.log",
    conda:
        "../../envs/datasets.yaml"
    params:
        url=config["sources"].get("germeval2019", {}).get("url"),
        sha256=config["sources"].get("germeval2019", {}).get("sha256"),
    script:
        "../scripts/download.py"


rule download_million_posts:
    output:
        "resources/downloads/million_post_corpus/corpus.sqlite3",
    log:
        "logs/download/million_posts.log",
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
        "resources/published/{source}/test.jsonl",
    log:
        "logs/download/{source}.log",
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
        texts="results/datasets/{dataset}/texts.parquet",
        splits="results/datasets/{dataset}/splits.parquet",
    log:
        "logs/build_dataset/{dataset}.log",
    conda:
        "../../envs/datasets.yaml"
    params:
        spec=lambda wildcards: config["datasets"][wildcards.dataset],
        source=dataset_source_spec,
        seed=SEED,
    script:
        "../scripts/build_dataset.py"
