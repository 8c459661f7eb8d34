# Reddit: the paper ships submission ids only; their texts are rehydrated through the official API
# with the user's own credentials (praw.ini or praw_* environment variables). Raw Reddit data stays
# in resources/reddit/ (design §6). Both rules need the network: they are local rules.


localrules:
    reddit_ids,
    rehydrate_reddit,


REDDIT = config["sources"].get("reddit") or {}


rule reddit_ids:
    """The paper's submission id list (URL + SHA-256, or a local copy), deduplicated."""
    input:
        **({"ids": REDDIT["ids_path"]} if REDDIT.get("ids_path") else {}),
    output:
        ids="resources/reddit/submission_ids.txt",
    log:
        "logs/reddit/ids.log",
    conda:
        "../../envs/reddit.yaml"
    params:
        path=REDDIT.get("ids_path"),
        url=REDDIT.get("ids_url"),
        sha256=REDDIT.get("ids_sha256"),
    script:
        "../scripts/reddit_ids.py"


rule rehydrate_reddit:
    """Submissions through PRAW in batches of 100, checkpointed after each batch (resumable)."""
    input:
        ids="resources/reddit/submission_ids.txt",
    output:
        submissions="resources/reddit/submissions.parquet",
        summary="resources/reddit/rehydrate_summary.json",
    log:
        "logs/reddit/rehydrate.log",
    benchmark:
        "results/benchmarks/reddit/rehydrate.tsv"
    conda:
        "../../envs/reddit.yaml"
    params:
        checkpoint="resources/reddit/checkpoint.jsonl",
        settings={
            k: REDDIT[k]
            for k in (
                "praw_site",
                "user_agent",
                "oauth_url",
                "reddit_url",
                "max_retries",
                "backoff_seconds",
            )
            if REDDIT.get(k) is not None
        },
    script:
        "../scripts/rehydrate_reddit.py"
