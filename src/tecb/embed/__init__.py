"""Embedding: model settings (specs), texts -> vectors streamed to Parquet, hub prefetch, the tiny test BERT."""
