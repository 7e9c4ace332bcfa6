from coderiv.cli.main import main

__all__ = ["main"]
