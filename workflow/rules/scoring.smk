# Second scoring mode (scoring.protocols: [paper, mteb_v2]): MTEB 2.x's clustering protocol per (model, dataset)
# on the pooled texts (src/tecb/scoring/mteb_v2.py), beside the paper's per-split scores, and its table.


MTEB_V2_FORMATS = ["md", "csv", "tex"]  # and html, a report item
MTEB_V2_TABLE = [table_path("table_mteb_v2", ext) for ext in MTEB_V2_FORMATS]
MTEB_V2_HTML = table_path("table_mteb_v2", "html")
MTEB_V2_LONG = table_path("table_mteb_v2_long", "csv")
SCORING_OUTPUTS = MTEB_V2_TABLE + [MTEB_V2_HTML, MTEB_V2_LONG] if MTEB_V2 else []


# one job per (model, dataset); with cluster.batch its cluster_batch job scores it instead
# (tecb.scoring.mteb_v2.batch_step; CLUSTER_STEP_MODELS: functions/cluster.smk)
rule mteb_v2:
    """MTEB v2's pooled, bootstrapped k-means score of one (model, dataset): one row per (level, bootstrap)."""
    input:
        embeddings=embedding_path("{model}", "{dataset}"),
        splits=splits_path("{dataset}"),
    output:
        mteb_v2_path("{model}", "{dataset}"),
    log:
        log_path("mteb_v2", "{model}", "{dataset}.log"),
    wildcard_constraints:
        model=alternatives(CLUSTER_STEP_MODELS),
    conda:
        "../../envs/cluster.yaml"
    threads: CLUSTER_RUN.threads
    params:
        seed=SEED,
        options=MTEB_V2_OPTIONS,
        max_documents=mteb_v2_max_documents,
    script:
        "../scripts/mteb_v2.py"


rule mteb_v2_table:
    input:
        [mteb_v2_path(m, d) for m in MODELS for d in DATASETS],
        # the chance row (rule chance_mteb_v2, tables.smk), when tables.chance is on
        chance=lambda wildcards: chance_mteb_v2_inputs(wildcards),
    output:
        table=MTEB_V2_TABLE,
        long=MTEB_V2_LONG,
        html=report(
            MTEB_V2_HTML,
            caption="../report/table_mteb_v2.rst",
            category="Tables",
            subcategory="MTEB v2 protocol",
            labels={"table": "table_mteb_v2"},
        ),
    log:
        log_path("mteb_v2_table.log"),
    conda:
        "../../envs/tables.yaml"
    params:
        pairs=[(m, d) for m in MODELS for d in DATASETS],
        model_names=MODEL_NAMES,
        datasets=DATASETS,
        formats=MTEB_V2_FORMATS,
        confidence=config["tables"]["statistics"]["confidence"],
    script:
        "../scripts/mteb_v2_table.py"
