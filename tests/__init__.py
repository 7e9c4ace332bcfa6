"""coderiv's tests, a package so that ``python -m pytest`` and plain ``pytest`` import them
the same way (as ``tests.test_…``, with the repository root on ``sys.path``). Shared helpers
live in ``tests.support``; a test module never imports another test module (enforced by
tests/test_architecture.py)."""
