"""Geospatial QA over real places (MultiGlobeQA, seed 003): the entity store and the executor."""
