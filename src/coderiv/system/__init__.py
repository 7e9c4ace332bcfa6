"""The operating system's plumbing, on the ground floor: what the standard library lacks of the C
library (:mod:`.libc`), signals (:mod:`.signals`), the garbage collector frozen around large
allocations (:mod:`.gc_freeze`), worker processes that die with their parent and never keep an
index locked (:mod:`.child_processes`), page-cache control of written, scratch and mapped files
(:mod:`.early_writeback`, :mod:`.scratch_pages`, :mod:`.mapped_pages`), shared-memory slots for
arrays handed between processes (:mod:`.shared_slots`), and Dask clusters (:mod:`.cluster`).

Nothing here knows what an index, a query or a document is: every layer above may use it."""
