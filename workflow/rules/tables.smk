# Scores and datasets -> the paper's tables (Markdown, CSV, LaTeX).


rule tables:
    input:
        scores="results/scores.parquet",
        texts=[texts_path(d) for d in DATASETS],
        splits=[splits_path(d) for d in DATASETS],
    output:
        TABLES,
    params:
        datasets=DATASETS,
        model_names={m: spec.get("name", m) for m, spec in config["models"].items()},
        configurations=CONFIGURATIONS,
        table2=config["tables"]["table2"],
    log:
        "logs/tables.log",
    script:
        "../scripts/tables.py"
