"""One index's face of a sharded index (:class:`~coderiv.index.shards.ShardView`, defined beside
:class:`~coderiv.index.shards.ShardedIndex`, which hands it out as its ``pairs_index()``): this
module keeps the names it had here importable."""

from coderiv.index.shards import VIEW_DIR, ShardView, merged_postings

__all__ = ["VIEW_DIR", "ShardView", "merged_postings"]
