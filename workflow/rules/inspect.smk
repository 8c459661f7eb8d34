# Inspectability (config `inspect`): per (model, dataset) the clusters of one split vs the gold labels with each
# cluster's top terms (c-TF-IDF), from the labels the cluster jobs save; and the share of truncated texts.

VIEW_KEYS = [(m, d) for m in MODELS for d in DATASETS] if INSPECT["clusters"] else []


INSPECT_OUTPUTS = [cluster_view_path(m, d) for m, d in VIEW_KEYS] + (
    [report_path("truncation.html"), report_path("truncation.csv")]
    if INSPECT["truncation"]
    else []
)


# one job per (model, dataset); with cluster.batch its cluster_batch job writes it instead
# (tecb.report.confusion.batch_step; CLUSTER_STEP_MODELS: functions/cluster.smk)
rule cluster_view:
    input:
        texts=texts_path("{dataset}"),
        splits=splits_path("{dataset}"),
        labels=labels_path("{model}", "{dataset}", VIEW_CONFIG[1], VIEW_CONFIG[0]),
    output:
        report(
            cluster_view_path("{model}", "{dataset}"),
            caption="../report/clusters.rst",
            category="Clusters",
            subcategory="{model}",
            labels={"model": "{model}", "dataset": "{dataset}"},
        ),
    log:
        log_path("cluster_view", "{model}", "{dataset}.log"),
    wildcard_constraints:
        model=alternatives(CLUSTER_STEP_MODELS),
    conda:
        "../../envs/tables.yaml"
    params:
        title=view_title,
        split=INSPECT["split"],
        top_terms=INSPECT["top_terms"],
    script:
        "../scripts/cluster_view.py"


rule truncation:
    """Per model and dataset: the share of texts cut at max_seq_length and the token coverage (embedding metadata)."""
    input:
        [embedding_path(m, d) for m in MODELS for d in DATASETS],
    output:
        csv=report_path("truncation.csv"),
        html=report(
            report_path("truncation.html"),
            caption="../report/truncation.rst",
            category="Run",
            labels={"item": "long texts"},
        ),
    log:
        log_path("truncation.log"),
    conda:
        "../../envs/tables.yaml"
    params:
        pairs=[(m, d) for m in MODELS for d in DATASETS],
        model_names=MODEL_NAMES,
        datasets=DATASETS,
    script:
        "../scripts/truncation.py"
