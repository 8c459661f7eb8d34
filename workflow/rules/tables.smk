# Scores and datasets -> the paper's tables (Markdown, CSV, LaTeX, HTML), each also beside the paper's numbers.

# tables.reference = the paper's per-model results (paper_table1.csv beside it); "" = no comparison.
REFERENCE = config["tables"]["reference"] or None
REFERENCE_TABLE1 = (
    os.path.join(os.path.dirname(REFERENCE), "paper_table1.csv") if REFERENCE else None
)
TABLE_STEMS = ["table1", "table2", "table3"] + (
    ["table1_vs_paper", "table2_vs_paper", "table3_vs_paper"] if REFERENCE else []
)
TABLE_FILES = expand(
    "results/tables/{stem}.{ext}", stem=TABLE_STEMS, ext=["md", "csv", "tex"]
)


rule tables:
    input:
        scores="results/scores.parquet",
        texts=[texts_path(d) for d in DATASETS],
        splits=[splits_path(d) for d in DATASETS],
        reference=[REFERENCE, REFERENCE_TABLE1] if REFERENCE else [],
    output:
        TABLE_FILES,
        html=[table_report(stem) for stem in TABLE_STEMS],
    log:
        "logs/tables.log",
    conda:
        "../../envs/tables.yaml"
    params:
        datasets=DATASETS,
        model_names={m: spec.get("name", m) for m, spec in config["models"].items()},
        configurations=CONFIGURATIONS,
        table2=config["tables"]["table2"],
    script:
        "../scripts/tables.py"
