"""tecb: the German Text Embedding Clustering Benchmark as a library.

Modules, one job each:

- ``tecb.io``        atomic Parquet/JSON writing, the dataset and embedding file contracts
- ``tecb.sources``   readers for the raw sources (GermEval 2019 blurbs, One Million Posts, 10kGNAD, Reddit)
- ``tecb.splits``    the paper's split recipes (random fractions, subreddit draws, within-genre splits)
- ``tecb.datasets``  raw source -> ``texts.parquet`` + ``splits.parquet``
- ``tecb.demo_data`` small raw inputs in the real formats, for the offline demo and the tests
- ``tecb.models``    tiny local models for offline runs
- ``tecb.embed``     text -> vectors (sentence-transformers, TF-IDF baseline), streamed to Parquet
- ``tecb.reduce``    PCA / UMAP per split
- ``tecb.cluster``   MiniBatchKMeans, Agglomerative, HDBSCAN, DBSTREAM
- ``tecb.metrics``   V-measure and friends per split
- ``tecb.tables``    the paper's tables from the long scores table
"""

__version__ = "0.1.0"
