"""What test modules share, in one place: the only test code another test module (or a
conftest) may import. Benchmarks never import it, and it imports nothing from benchmarks.

- files: ``write_docs``, a tiny collection written into a folder
- strategies: hypothesis strategies for documents and collections
- report_corpus: a collection whose shared passages are known exactly
- pairs: random collections and their edits, for the n-to-n pair tests
- formats: Word documents built in memory, and the "fails cleanly" check of an extraction
- processes: the process table from /proc (which processes a run left behind)
- faults: a collection slow to index and the source tree for child processes
- dask_cluster: a real Dask scheduler and workers started as processes
- chromium: Debian's Chromium for Playwright, and the mark that skips without it
"""
