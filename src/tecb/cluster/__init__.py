"""Clustering: per-split reductions (PCA, UMAP), the algorithms (exact Ward included), the metrics."""
